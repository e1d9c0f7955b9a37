// `interprobe check --policy FILE [REPORT.json]`: a site policy's items judged against a saved
// report, or (no REPORT) against the probes the policy needs, run here (--root honoured).
// Exit 1 when an item of severity fail fails (with --fail-on warn, a warned item too), 2 for a
// bad policy, 0 otherwise; skipped (not measured) items fail a check only with --strict.
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/session.hpp"
#include "cli/workload_options.hpp"
#include "common/errors.hpp"
#include "common/output_file.hpp"
#include "common/user_file.hpp"
#include "report/fleet/fleet.hpp"
#include "model/json.hpp"
#include "report/policy/check.hpp"
#include "report/policy/check_output.hpp"
#include "report/render/renderers.hpp"

namespace interprobe::cli {

namespace {

struct CheckOptions {
  std::string policy;
  std::optional<std::string> report;
  std::optional<std::string> junit;
  bool list_subjects = false;
  std::optional<std::int64_t> expect_gpus;
  bool strict = false;
  WorkloadOptions workloads;
};

bool needs_ranking(const policy::Policy& p) {
  return std::any_of(p.items.begin(), p.items.end(), [](const policy::Item& it) {
    return it.kind == policy::ItemKind::bottleneck || it.selector.rfind("bottlenecks/", 0) == 0;
  });
}

// The probes of `run`, only those the policy reads; the rest are not run (and not listed).
std::vector<std::unique_ptr<Probe>> probes_for(const policy::Policy& p) {
  auto names = policy::probes_needed(p);
  std::vector<std::unique_ptr<Probe>> all = inventory_probes();
  for (auto& m : measurement_probes()) all.push_back(std::move(m));
  std::vector<std::unique_ptr<Probe>> chosen;
  for (auto& probe : all)
    if (std::find(names.begin(), names.end(), probe->name()) != names.end()) chosen.push_back(std::move(probe));
  return chosen;
}

void print_result(const policy::CheckResult& result, const GlobalOptions& o, bool warn_gates) {
  if (o.json || o.format == "json") {
    std::cout << policy::check_json(result, warn_gates);
  } else if (o.format == "markdown") {
    std::cout << render::render_markdown(policy::check_document(result, warn_gates));
  } else {
    std::cout << render::render_text(policy::check_document(result, warn_gates), text_style(o));
  }
  std::cout << std::flush;
}

void print_fleet_result(const std::vector<policy::NamedCheck>& suites, const GlobalOptions& o, bool warn_gates) {
  if (o.json || o.format == "json") std::cout << policy::fleet_check_json(suites, warn_gates);
  else if (o.format == "markdown") std::cout << render::render_markdown(policy::fleet_check_document(suites, warn_gates));
  else std::cout << render::render_text(policy::fleet_check_document(suites, warn_gates), text_style(o));
  std::cout << std::flush;
}

int list_subjects(const GlobalOptions& options, const CheckOptions& c) {
  if (!c.report) throw InputError("check --list-subjects: give the REPORT whose metric and fact paths to list");
  report::Report r = report::read_report_file(*c.report);
  if (options.json || options.format == "json") std::cout << policy::subjects_json(r);
  else if (options.format == "markdown") std::cout << render::render_markdown(policy::subjects_document(r));
  else std::cout << render::render_text(policy::subjects_document(r), text_style(options));
  return kExitOk;
}

int execute_check(const GlobalOptions& options, const CheckOptions& c) {
  if (c.list_subjects) return list_subjects(options, c);
  if (c.policy.empty()) throw InputError("check: --policy FILE is required (presets in examples/policies/)");
  // Everything that can be wrong with the command line fails before any probe runs.
  policy::Policy pol = policy::read_policy_file(c.policy);
  if (c.expect_gpus) policy::expect_gpu_count(pol, *c.expect_gpus);
  if (c.junit) check_output_target(*c.junit, "--junit", ExistingOutput::replace_regular);
  if (c.report && options.root)
    throw InputError("--root chooses the machine check probes; with REPORT given nothing is probed (drop one)");
  if (c.report && options.output)
    throw InputError("-o saves the report check measures; with REPORT given there is none (drop -o)");
  bool rank = needs_ranking(pol) && (!c.report || !c.workloads.models.empty());
  std::optional<PreparedWorkloads> prepared;
  if (rank) prepared = prepare_workloads(c.workloads);
  // --fail-on applies to the items: warn (or info) lets a warned item fail the check too.
  auto threshold = report::parse_enum<report::Severity>(options.fail_on);
  bool warn_gates = threshold && *threshold <= report::Severity::warn;

  report::Report r;
  if (c.report) {
    const std::string text = read_user_file(*c.report, {*c.report, "a report (or fleet report) written by interprobe -o FILE",
                                                        fleet::kMaxFleetBytes});
    if (fleet::is_fleet_text(text)) {
      auto fleet = fleet::parse_fleet_text(text, *c.report);
      if (!fleet) throw std::logic_error("is_fleet_text and parse_fleet_text disagree on " + *c.report);
      if (rank) throw InputError("check: workload options (--model ...) rank one machine's report, not a fleet report; drop them");
      auto suites = policy::check_fleet(pol, *fleet);
      if (c.strict)
        for (auto& suite : suites) policy::fail_unmeasured_gates(suite.result, warn_gates);
      print_fleet_result(suites, options, warn_gates);
      if (c.junit) write_output_file(*c.junit, policy::fleet_check_junit(suites, warn_gates), "--junit");
      return policy::fleet_check_failed(suites, warn_gates) ? kExitCheckFailed : kExitOk;
    }
    // Not a fleet: a report's limit, before anything is parsed (an 80 MiB report took 2.6 GB to be refused).
    if (text.size() > report::kMaxReportBytes)
      throw InputError(fmt::format("{}: {} bytes, more than the {} a report may hold (a fleet report has "
                                   "fleet_schema_version); give a report written by `interprobe run -o FILE`",
                                   *c.report, text.size(), report::kMaxReportBytes));
    r = report::parse_report_text(text, *c.report);
    if (rank) r.bottlenecks = rank_workloads(r, *prepared);
  } else {
    GlobalOptions session = options;
    session.report_on_stdout = false;  // stdout carries the check
    session.fail_on = "never";         // findings do not gate a check; its items do
    auto probes = probes_for(pol);
    std::function<void(report::Report&)> after;
    if (rank)
      after = [&prepared](report::Report& measured) {
        if (measured.host.live || measured.compute || measured.collective) measured.bottlenecks = rank_workloads(measured, *prepared);
      };
    SessionResult s = run_session(session, probes, UnsupportedPolicy::record, after);
    if (s.exit_code != kExitOk) return s.exit_code;  // interrupted or bad input: said on stderr
    r = std::move(s.report);
  }
  policy::CheckResult result = policy::check_report(pol, r);
  if (c.strict) policy::fail_unmeasured_gates(result, warn_gates);
  print_result(result, options, warn_gates);
  if (c.junit) write_output_file(*c.junit, policy::check_junit(result, warn_gates), "--junit");
  return policy::check_failed(result, warn_gates) ? kExitCheckFailed : kExitOk;
}

}  // namespace

Command add_check_command(CLI::App& app, GlobalOptions& options) {
  Command cmd;
  cmd.app = app.add_subcommand("check", "Judge a report (or this machine) against a policy: pass/warn/fail per item, JUnit");
  auto c = std::make_shared<CheckOptions>();
  cmd.app->add_option("--policy", c->policy, "Policy file (JSON; presets in examples/policies/)");
  cmd.app->add_option("REPORT", c->report, "Report to judge; without it the probes the policy needs run here (--root honoured)");
  cmd.app->add_option("--junit", c->junit, "Also write JUnit XML (one test case per item) to FILE");
  cmd.app->add_flag("--list-subjects", c->list_subjects,
                    "Print every metric and fact path REPORT holds (what policy items select), then exit");
  cmd.app->add_option("--expect-gpus", c->expect_gpus,
                      "Fail unless at least N NVIDIA GPUs are on the bus (sets the policy's gpu-count item, or adds one)")
      ->check(CLI::PositiveNumber);
  cmd.app->add_flag("--strict", c->strict,
                    "An item that would gate (severity fail; warn too with --fail-on warn) but was not measured fails "
                    "instead of being skipped");
  add_workload_options(cmd.app, c->workloads);
  cmd.execute = [&options, c]() { return execute_check(options, *c); };
  return cmd;
}

}  // namespace interprobe::cli
