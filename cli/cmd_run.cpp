#include <algorithm>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/session.hpp"
#include "cli/workload_options.hpp"
#include "probes/bandwidth/bandwidth_probe.hpp"
#include "probes/collective/collective_probe.hpp"
#include "probes/compute/compute_probe.hpp"
#include "common/errors.hpp"
#include "probes/host/system_probe.hpp"
#include "probes/topology/topology_probe.hpp"
#include "probes/virt/virt_probe.hpp"

namespace interprobe::cli {

// What the machine is: cheap, read-only probes. `snapshot` runs these to record what they read.
std::vector<std::unique_ptr<Probe>> inventory_probes() {
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(make_system_probe());
  probes.push_back(make_topology_probe());
  probes.push_back(make_virt_probe());
  return probes;
}

// What the machine does: timed measurements.
std::vector<std::unique_ptr<Probe>> measurement_probes() {
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(make_bandwidth_probe(bandwidth_plan(report::BandwidthPlan::quick)));
  probes.push_back(collective::make_run_collective_probe());
  probes.push_back(make_compute_probe(compute_plan(report::ComputePlan::quick)));
  return probes;
}

namespace {

struct ProbeSelection {
  std::vector<std::string> only, skip;
};

// Stands in for a probe the user left out, so the report still lists it and says why.
class NotSelectedProbe final : public Probe {
 public:
  NotSelectedProbe(std::string name, std::string why) : name_(std::move(name)), why_(std::move(why)) {}
  std::string name() const override { return name_; }
  void run(const ProbeContext&, report::Report&) override { throw SkippedError(why_); }

 private:
  std::string name_, why_;
};

std::vector<std::unique_ptr<Probe>> select_probes(std::vector<std::unique_ptr<Probe>> all, const ProbeSelection& selection) {
  std::set<std::string> known;
  for (const auto& p : all) known.insert(p->name());
  auto check = [&](const std::vector<std::string>& names, const char* option) {
    for (const auto& n : names)
      if (!known.count(n))
        throw InputError(fmt::format("run {} {}: no such probe; probes are {}", option, n, fmt::join(known, ", ")));
  };
  check(selection.only, "--only");
  check(selection.skip, "--skip");
  auto listed = [](const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  for (auto& p : all) {
    std::string n = p->name();
    if (!selection.only.empty() && !listed(selection.only, n))
      p = std::make_unique<NotSelectedProbe>(n, "not selected (--only " + fmt::format("{}", fmt::join(selection.only, ",")) + ")");
    else if (listed(selection.skip, n))
      p = std::make_unique<NotSelectedProbe>(n, "not selected (--skip " + n + ")");
  }
  return all;
}

}  // namespace

Command add_run_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("run", "Run every probe and report (the default command)");
  auto selection = std::make_shared<ProbeSelection>();
  c.app->add_option("--only", selection->only, "Run only these probes (system, topology, virtualization, bandwidth, collective, compute)")
      ->delimiter(',')
      ->type_name("NAME,...");
  c.app->add_option("--skip", selection->skip, "Leave these probes out; the report lists them as skipped")
      ->delimiter(',')
      ->type_name("NAME,...");
  auto workloads = std::make_shared<WorkloadOptions>();
  add_workload_options(c.app, *workloads);
  c.execute = [&options, selection, workloads]() {
    auto probes = inventory_probes();
    for (auto& p : measurement_probes()) probes.push_back(std::move(p));
    probes = select_probes(std::move(probes), *selection);
    // Models and options are checked before anything is measured.
    auto prepared = std::make_shared<PreparedWorkloads>(prepare_workloads(*workloads));
    auto rank = [prepared](report::Report& r) {
      // A replayed tree measures nothing, so there is nothing to rank; a live machine always gets
      // the section, which says what is missing when a probe could not run.
      if (r.host.live || r.compute || r.collective) r.bottlenecks = rank_workloads(r, *prepared);
    };
    return run_session(options, probes, UnsupportedPolicy::record, rank).exit_code;
  };
  return c;
}

}  // namespace interprobe::cli
