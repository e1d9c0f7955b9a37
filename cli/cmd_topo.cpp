// `interprobe topo`: the topology probe alone: PCI tree, NUMA, GPUs and the path of every GPU pair.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/session.hpp"
#include "probes/topology/topology_probe.hpp"

namespace interprobe::cli {

Command add_topo_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("topo",
                             "PCI tree, links, NUMA, GPUs and the path between every GPU pair (like nvidia-smi topo -m)");
  auto topo = std::make_shared<TopologyOptions>();
  auto tree = std::make_shared<bool>(false);
  c.app->add_flag("--tree", *tree, "Also show the PCI tree: bridges -> devices with current/max link, downtrained flagged");
  c.app->add_option("--hwloc-xml", topo->hwloc_xml, "Build the topology from an hwloc XML export (lstopo --of xml FILE)")
      ->check(CLI::ExistingFile);
  c.app->add_option("--record-nvml", topo->record_nvml_to,
                    "Write the NVML data used (live machine) to FILE; put it at <root>/nvml.json to replay with --root");
  c.execute = [&options, topo, tree]() {
    options.views.topology_tree = *tree;
    std::vector<std::unique_ptr<Probe>> probes;
    probes.push_back(make_topology_probe(*topo));
    return run_session(options, probes, UnsupportedPolicy::exit_code_4).exit_code;
  };
  return c;
}

}  // namespace interprobe::cli
