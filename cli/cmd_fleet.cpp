// `interprobe fleet`: under `mpirun -np N --map-by ppr:1:node` or `srun`, every node runs the
// probes of `run`, rank 0 gathers the reports and writes one fleet report (report/fleet/).
#include <algorithm>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/features.hpp"
#include "cli/fleet_ranks.hpp"
#include "cli/session.hpp"
#include "cli/workload_options.hpp"
#include "common/errors.hpp"
#include "common/json_text.hpp"
#include "common/output_file.hpp"
#include "common/stopwatch.hpp"
#include "common/text.hpp"
#include "probes/collective/collective_probe.hpp"
#include "probes/collective/mpi_world.hpp"
#include "report/fleet/fleet.hpp"
#include "model/json.hpp"
#include "model/vocabulary.hpp"
#include "report/render/renderers.hpp"

#include <nlohmann/json.hpp>

namespace interprobe::cli {

namespace {

struct FleetOptions {
  bool rank_as_node = false;
  std::vector<std::string> root_per_rank;
  std::vector<std::string> node_report_per_rank;  // testing: a rank's node report read from a file
};

// This rank's entry of a per-rank list (every rank checks the same list: they fail alike).
std::optional<std::string> per_rank(const std::vector<std::string>& list, const char* option, int rank, int ranks) {
  if (list.empty()) return std::nullopt;
  if (static_cast<int>(list.size()) != ranks)
    throw InputError(fmt::format("fleet {}: {} entries for {} ranks; give one per rank, in rank order", option, list.size(), ranks));
  return list[static_cast<std::size_t>(rank)];
}

NodeOutcome probe_this_node(const GlobalOptions& options, const ProbeSelection& selection,
                            const std::shared_ptr<PreparedWorkloads>& prepared, const std::optional<std::string>& root,
                            const std::optional<std::string>& fixture) {
  NodeOutcome outcome;
  try {
    if (fixture) {
      outcome.report = report::read_report_file(*fixture);
      return outcome;
    }
    GlobalOptions o = options;
    o.output.reset();
    o.report_on_stdout = false;
    o.quiet = true;
    o.fail_on = "never";
    if (root) o.root = *root;
    const auto probes = select_probes(run_probes_of(nullptr, {}, prepared, selection.max_message_bytes()), selection);
    outcome.report = run_session(o, probes, UnsupportedPolicy::record, ranking(prepared)).report;
  } catch (const InterruptedError&) {
    throw;
  } catch (const std::exception& e) {
    outcome.report.reset();
    outcome.failure = e.what();
  }
  return outcome;
}

void print_fleet(const fleet::FleetReport& f, const GlobalOptions& o) {
  if (o.json || o.format == "json") {
    std::cout << json_text(fleet::fleet_to_json(f));
  } else if (o.format == "markdown") {
    std::cout << render::render_markdown(fleet::fleet_document(f));
  } else {
    std::cout << render::render_text(fleet::fleet_document(f), text_style(o));
  }
  std::cout << std::flush;
}

std::string fleet_digest(const GlobalOptions& o, const ProbeSelection& s, const FleetOptions& f) {
  return fmt::format("fleet only={} skip={} max-size={} root={} roots={} fixtures={} rank_as_node={} libs={},{},{},{}",
                     fmt::join(s.only, ","), fmt::join(s.skip, ","), s.max_size.value_or("-"), o.root.value_or("-"),
                     fmt::join(f.root_per_rank, ","),
                     fmt::join(f.node_report_per_rank, ","), f.rank_as_node, o.nvml_lib.value_or("-"),
                     o.nccl_lib.value_or("-"), o.cublaslt_lib.value_or("-"), o.cuda_lib.value_or("-"));
}

FleetPlan plan_of(const GlobalOptions& o, const ProbeSelection& s, const FleetOptions& f) {
  FleetPlan plan;
  plan.rank_as_node = f.rank_as_node;
  plan.max_message_bytes = s.max_message_bytes();
  auto listed = [](const std::vector<std::string>& names) {
    return std::find(names.begin(), names.end(), "collective") != names.end();
  };
  if ((!s.only.empty() && !listed(s.only)) || listed(s.skip)) {
    plan.measure_allreduce = false;
    plan.no_allreduce_reason = "the collective probe is not selected (--only/--skip)";
  }
  if (plan.measure_allreduce && (o.root || !f.root_per_rank.empty() || !f.node_report_per_rank.empty())) {
    plan.measure_allreduce = false;
    plan.no_allreduce_reason = "replaying --root trees (or fixture reports): all-reduce sweeps need the live machines";
  }
  return plan;
}

collective::RankGroup& fleet_world(collective::SingleProcessGroup& alone) {
  if (!collective::launched_by_mpi_launcher() || collective::launcher_world_size() == 1) return alone;
  try {
    return collective::start_mpi();
  } catch (const InterruptedError&) {
    throw;
  } catch (const std::exception& e) {
    throw UnsupportedError(fmt::format("fleet: started by an MPI launcher, but MPI cannot start here: {}; every rank "
                                       "needs interprobe's MPI backend to send its report to rank 0",
                                       e.what()));
  }
}

// --fail-on over the fleet: any node's finding at or above the severity, or a node that sent no
// report (it cannot be shown clean), fails the pipeline after the fleet report is out.
int fleet_fail_on_exit_code(const fleet::FleetReport& f, const GlobalOptions& o) {
  if (!report::parse_enum<report::Severity>(o.fail_on)) return kExitOk;  // "never"
  std::vector<std::string> hits, silent;
  for (const auto& n : f.nodes) {
    if (!n.ok() || !n.report) {
      silent.push_back(printable(n.name));
      continue;
    }
    for (const auto& hit : fail_on_hits(*n.report, o)) hits.push_back(fmt::format("{}: {}", printable(n.name), hit));
  }
  if (hits.empty() && silent.empty()) return kExitOk;
  std::string why = fmt::format("{} finding(s) at or above it", hits.size());
  if (!hits.empty()) why += fmt::format(": {}", fmt::join(hits, ", "));
  if (!silent.empty()) why += fmt::format("; {} node(s) sent no report: {}", silent.size(), fmt::join(silent, ", "));
  std::cerr << fmt::format("interprobe: --fail-on {}: {}\n", o.fail_on, why);
  return kExitCheckFailed;
}

int execute_fleet(const GlobalOptions& options, const ProbeSelection& selection, const WorkloadOptions& workloads,
                  const FleetOptions& fleet_options) {
  if (options.format != "text" && options.format != "markdown" && options.format != "json")
    throw InputError(fmt::format("fleet --format {}: the fleet report is text, markdown or json", options.format));
  select_probes(run_probes_of(nullptr, {}), selection);  // bad --only/--skip: exit 2 on every rank
  auto prepared = std::make_shared<PreparedWorkloads>(prepare_workloads(workloads));
  const FleetPlan plan = plan_of(options, selection, fleet_options);
  collective::SingleProcessGroup alone;
  collective::RankGroup& world = fleet_world(alone);
  const bool mpi = &world != &alone;
  const int rank = world.process_rank();
  GlobalOptions o = options;
  if (collective::launched_by_mpi_launcher()) o.no_color = true;  // mpirun hands its ranks a pseudo-terminal
  // Every check that can fail on some ranks only is agreed on: no rank goes on alone to wait.
  const std::string started_at = utc_now_iso8601();
  std::string error;
  std::optional<std::string> root, fixture;
  try {
    collective::agree_on_options(world, fleet_digest(options, selection, fleet_options), "fleet");
    root = per_rank(fleet_options.root_per_rank, "--root-per-rank", rank, world.process_count());
    fixture = per_rank(fleet_options.node_report_per_rank, "--node-report-per-rank", rank, world.process_count());
    if (rank == 0 && o.output) check_output_target(*o.output, "-o", ExistingOutput::replace_regular);
  } catch (const InputError& e) {
    error = e.what();
  }
  if (world.sum_over_processes(error.empty() ? 0 : 1) > 0) {
    if (mpi) collective::finish_mpi(true, kExitUsage);
    if (!error.empty()) throw InputError(error);
    return kExitUsage;  // rank 0 says why
  }
  if (rank != 0) silence_stdout();
  std::optional<fleet::FleetReport> fleet;
  try {
    fleet = gather_fleet(world, plan, [&] { return probe_this_node(o, selection, prepared, root, fixture); });
  } catch (const InterruptedError&) {
    if (mpi) world.abort_all("interrupted", kExitInterrupted);
    throw;
  }
  int code = kExitOk;
  if (fleet) {
    Stopwatch analysis;
    fleet::analyze(*fleet);
    fleet->timing.analysis_s = analysis.elapsed_s();
    fleet->tool_version = interprobe_version();
    fleet->started_at = started_at;
    try {
      print_fleet(*fleet, o);
      if (o.output)
        write_output_file(*o.output, json_text(fleet::fleet_to_json(*fleet)),
                          "-o", ExistingOutput::replace_regular);
    } catch (const InputError& e) {
      std::cerr << "interprobe: error: " << printable(e.what()) << "\n";
      code = kExitUsage;
    }
    for (const auto& n : fleet->nodes)
      if (!n.ok()) std::cerr << fmt::format("interprobe: fleet: node {} failed: {}\n", printable(n.name), printable(n.failure.value_or("")));
    if (code == kExitOk) code = fleet_fail_on_exit_code(*fleet, o);
  }
  if (mpi) collective::finish_mpi(true, code);
  return code;
}

}  // namespace

Command add_fleet_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("fleet",
                             "Under `mpirun -np N --map-by ppr:1:node` or `srun`: probe every node as `run` does, "
                             "rank 0 writes one fleet report (outlier nodes, heterogeneity, the all-reduce across nodes)");
  auto selection = std::make_shared<ProbeSelection>();
  add_probe_selection_options(c.app, *selection);
  auto workloads = std::make_shared<WorkloadOptions>();
  add_workload_options(c.app, *workloads);
  auto f = std::make_shared<FleetOptions>();
  c.app->add_flag("--rank-as-node", f->rank_as_node,
                  "For testing: count every rank as a node of its own (ranks of one machine otherwise share one node)");
  c.app->add_option("--root-per-rank", f->root_per_rank,
                    "For testing: rank i reads machine state from the i-th DIR (one per rank) instead of --root")
      ->delimiter(',')
      ->type_name("DIR,...");
  c.app->add_option("--node-report-per-rank", f->node_report_per_rank,
                    "For testing only: rank i takes its node's report from the i-th FILE instead of probing")
      ->delimiter(',')
      ->type_name("FILE,...");
  c.execute = [&options, selection, workloads, f]() { return execute_fleet(options, *selection, *workloads, *f); };
  return c;
}

}  // namespace interprobe::cli
