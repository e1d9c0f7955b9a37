#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/session.hpp"
#include "probes/bandwidth/bandwidth_probe.hpp"
#include "probes/collective/collective_probe.hpp"
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
  probes.push_back(make_bandwidth_probe(bandwidth_plan("quick")));
  probes.push_back(collective::make_run_collective_probe());
  return probes;
}

Command add_run_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("run", "Run every probe and report (the default command)");
  c.execute = [&options]() {
    auto probes = inventory_probes();
    for (auto& p : measurement_probes()) probes.push_back(std::move(p));
    return run_session(options, probes, UnsupportedPolicy::record).exit_code;
  };
  return c;
}

}  // namespace interprobe::cli
