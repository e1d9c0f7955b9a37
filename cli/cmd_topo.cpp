// `interprobe topo`: the topology probe alone: PCI tree, NUMA, GPUs and the path of every GPU pair;
// with --nccl-topo, an NCCL topology file for a guest whose PCIe tree misleads NCCL.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/session.hpp"
#include "common/errors.hpp"
#include "common/output_file.hpp"
#include "common/text.hpp"
#include "probes/topology/cpu_numa.hpp"
#include "probes/topology/topology_probe.hpp"
#include "report/render/nccl_topology.hpp"

namespace interprobe::cli {

namespace {

struct NcclTopoOptions {
  std::optional<std::string> file;
  std::optional<double> link_gts;
  std::optional<std::int64_t> link_width;
  std::vector<std::string> numa;  // NODE=GPUS@CPUS
};

std::set<int> parsed_list(const std::string& text, const std::string& spec, const char* what) {
  std::string why;
  auto set = parse_cpulist(text, &why);
  if (!set || set->empty())
    throw InputError(fmt::format("--nccl-numa {}: the {} '{}' is not a list like 0-3,6 ({}); write NODE=GPUS@CPUS, "
                                 "e.g. --nccl-numa 1=4-7@24-47",
                                 spec, what, text, why.empty() ? "empty" : why));
  return *set;
}

// "1=4-7@24-47": NUMA node 1 holds GPUs 4-7 and CPUs 24-47.
render::NcclNumaSplit parse_numa_split(const std::string& spec) {
  auto eq = spec.find('=');
  auto at = spec.find('@');
  if (eq == std::string::npos || at == std::string::npos || at < eq)
    throw InputError(fmt::format("--nccl-numa {}: write NODE=GPUS@CPUS, e.g. --nccl-numa 1=4-7@24-47 (GPUs 4-7 and "
                                 "CPUs 24-47 on NUMA node 1)",
                                 spec));
  render::NcclNumaSplit split;
  auto node = parse_int(spec.substr(0, eq));
  if (!node || *node < 0 || *node > 1023)
    throw InputError(fmt::format("--nccl-numa {}: NUMA node '{}' is not a number from 0 to 1023", spec, spec.substr(0, eq)));
  split.numa_id = *node;
  for (int g : parsed_list(spec.substr(eq + 1, at - eq - 1), spec, "GPU list")) split.gpu_indices.insert(g);
  split.cpus = parsed_list(spec.substr(at + 1), spec, "CPU list");
  return split;
}

render::NcclTopologyFacts probed_facts(const report::TopologySection& t, const NcclTopoOptions& o) {
  render::NcclTopologyFacts facts;
  facts.link_gts = o.link_gts;
  facts.link_width = o.link_width;
  for (const auto& spec : o.numa) facts.numa.push_back(parse_numa_split(spec));
  for (const auto& node : t.cpu.numa_nodes) {
    auto cpus = node.cpus ? parse_cpulist(*node.cpus) : std::nullopt;
    if (!cpus) continue;
    facts.probed_numa_cpus[node.id] = *cpus;
    facts.all_cpus.insert(cpus->begin(), cpus->end());
  }
  for (const auto& package : t.cpu.packages)
    if (auto cpus = package.cpus ? parse_cpulist(*package.cpus) : std::nullopt) facts.all_cpus.insert(cpus->begin(), cpus->end());
  if (facts.all_cpus.empty() && t.cpu.logical_cpus)
    for (int c = 0; c < std::min<std::int64_t>(*t.cpu.logical_cpus, 65536); ++c) facts.all_cpus.insert(c);
  // The vendor string NCCL wants, from the model name; without it NCCL asks the CPU it runs on.
  std::string model = t.cpu.packages.empty() ? "" : t.cpu.packages.front().model.value_or("");
  if (model.find("AMD") != std::string::npos) facts.cpu_vendor = "AuthenticAMD";
  else if (model.find("Intel") != std::string::npos) facts.cpu_vendor = "GenuineIntel";
#if defined(__aarch64__)
  facts.arch = "arm64";
#elif defined(__powerpc64__)
  facts.arch = "ppc64";
#endif
  return facts;
}

void write_nccl_topology(const report::Report& report, const NcclTopoOptions& o) {
  if (!report.topology) throw InputError("--nccl-topo: the topology probe did not finish, so no file was written");
  auto file = render::nccl_topology_file(*report.topology, probed_facts(*report.topology, o));
  write_output_file(*o.file, file.xml, "--nccl-topo");
  std::fprintf(stderr, "wrote NCCL topology file %s\nwhat it changes for NCCL:\n", printable(*o.file).c_str());
  for (const auto& c : file.changes) std::fprintf(stderr, "  %s\n", c.c_str());
  for (const auto& n : file.notes) std::fprintf(stderr, "%s\n", n.c_str());
}

}  // namespace

Command add_topo_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("topo",
                             "PCI tree, links, NUMA, GPUs and the path between every GPU pair (like nvidia-smi topo -m)");
  auto topo = std::make_shared<TopologyOptions>();
  auto tree = std::make_shared<bool>(false);
  auto nccl = std::make_shared<NcclTopoOptions>();
  c.app->add_flag("--tree", *tree, "Also show the PCI tree: bridges -> devices with current/max link, downtrained flagged");
  c.app->add_option("--hwloc-xml", topo->hwloc_xml, "Build the topology from an hwloc XML export (lstopo --of xml FILE)")
      ->check(CLI::ExistingFile);
  c.app->add_option("--record-nvml", topo->record_nvml_to,
                    "Write the NVML data used (live machine) to FILE; put it at <root>/nvml.json to replay with --root");
  c.app->add_option("--nccl-topo", nccl->file,
                    "Write an NCCL topology file (NCCL_TOPO_FILE) for a guest whose GPUs sit flat under the root "
                    "complex: GPUs of a NUMA node under one switch, at their real link rate");
  c.app->add_option("--nccl-link-speed", nccl->link_gts,
                    "With --nccl-topo: the GPUs' real PCIe rate in GT/s (32 = Gen5) when the guest's emulated ports say less");
  c.app->add_option("--nccl-link-width", nccl->link_width, "With --nccl-topo: the GPUs' real lane count");
  c.app->add_option("--nccl-numa", nccl->numa,
                    "With --nccl-topo: NODE=GPUS@CPUS, e.g. 1=4-7@24-47 (repeat per node) when the guest hides NUMA");
  c.execute = [&options, topo, tree, nccl]() {
    if (!nccl->file && (nccl->link_gts || nccl->link_width || !nccl->numa.empty()))
      throw InputError("--nccl-link-speed, --nccl-link-width and --nccl-numa describe the file of --nccl-topo FILE; "
                       "add --nccl-topo FILE");
    if (nccl->file) {
      check_output_target(*nccl->file, "--nccl-topo", ExistingOutput::replace_regular);
      if (nccl->link_gts && !render::nccl_known_link_gts(*nccl->link_gts))
        throw InputError(fmt::format("--nccl-link-speed {:g}: not a PCIe rate NCCL knows (2.5, 5, 8, 16, 32 or 64 "
                                     "GT/s); give the GPUs' real rate, e.g. 32 for Gen5",
                                     *nccl->link_gts));
      for (const auto& spec : nccl->numa) parse_numa_split(spec);  // bad syntax: exit 2 before probing
    }
    options.views.topology_tree = *tree;
    std::vector<std::unique_ptr<Probe>> probes;
    probes.push_back(make_topology_probe(*topo));
    auto result = run_session(options, probes, UnsupportedPolicy::exit_code_4);
    if (nccl->file && (result.exit_code == kExitOk || result.exit_code == kExitCheckFailed))
      write_nccl_topology(result.report, *nccl);
    return result.exit_code;
  };
  return c;
}

}  // namespace interprobe::cli
