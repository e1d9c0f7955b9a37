// NCCL topology file for a flattened guest (nccl_topology.hpp). The loader's rules this writer
// keeps (NVIDIA/nccl src/graph/xml.cc, xml.h, topo.cc):
//   no <?xml?> prolog (read as an element that never closes); spaces only, no tabs; one tag per
//   line; every value double-quoted and at most 255 bytes; at most 16 attributes an element;
//   system version="1" > cpu (numaid, affinity as a sysfs cpumap, arch, vendor) > pci (invented
//   switch, class 0x060400, a busid absent from /sys) > pci (the GPU at its own lower-case busid,
//   which NCCL matches with strcmp); link_speed in a spelling its table knows (else Gen3).
#include "report/render/nccl_topology.hpp"

#include <algorithm>
#include <cmath>
#include <regex>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/text.hpp"

namespace interprobe::render {

namespace {

struct LinkRate {
  double gts;
  int nccl_code;  // NCCL's value per lane in 100 Mb/s; its bandwidth is width x code / 80 GB/s
};
constexpr LinkRate kNcclRates[] = {{2.5, 15}, {5, 30}, {8, 60}, {16, 120}, {32, 240}, {64, 480}};

const LinkRate* nccl_rate(double gts) {
  for (const auto& r : kNcclRates)
    if (std::fabs(r.gts - gts) < 1e-6) return &r;
  return nullptr;
}

double nccl_gbps(double gts, std::int64_t width) {
  const LinkRate* r = nccl_rate(gts);
  return r ? static_cast<double>(width) * r->nccl_code / 80.0 : 0;
}

std::string rate_text(double gts, std::int64_t width) {
  return fmt::format("{:g} GT/s x{} ({:g} GB/s to NCCL)", gts, width, nccl_gbps(gts, width));
}

// NCCL's PCI busid form: dddd:bb:dd.f in lower case, function 0/4/8/c (its busIdToInt64 packs the
// function into the bus id with those values).
bool nccl_busid(const std::string& bdf) {
  static const std::regex form("^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[048c]$");
  return std::regex_match(bdf, form);
}

std::string gpu_label(const report::Gpu& g) { return fmt::format("GPU {} ({})", g.index, printable(g.bdf)); }

// The link NCCL would read for a GPU without the file: the slower of the GPU's own maximum and
// its port's (an emulated root port may say less than the GPU).
struct GpuLinks {
  double own_gts = 0, seen_gts = 0;
  std::int64_t own_width = 16, seen_width = 16;
  bool seen_unknown = false;  // the guest does not say: NCCL falls back to 8 GT/s
};

GpuLinks gpu_links(const report::TopologySection& t, const report::Gpu& g) {
  GpuLinks l;
  const auto* dev = t.device(g.bdf);
  if (dev && dev->link.max_gts) l.own_gts = *dev->link.max_gts;
  if (dev && dev->link.max_lanes) l.own_width = *dev->link.max_lanes;
  l.seen_gts = l.own_gts;
  l.seen_width = l.own_width;
  const auto* port = dev && dev->parent_bdf ? t.device(*dev->parent_bdf) : nullptr;
  if (port && port->link.max_gts && *port->link.max_gts > 0) l.seen_gts = std::min(l.seen_gts, *port->link.max_gts);
  if (port && port->link.max_lanes) l.seen_width = std::min(l.seen_width, *port->link.max_lanes);
  // A rate NCCL's table lacks ("Unknown", or no link files on conventional PCI) reads as Gen3.
  l.seen_unknown = !nccl_rate(l.seen_gts);
  if (l.seen_unknown) l.seen_gts = 8;
  return l;
}

// A GPU under a real PCIe switch: NCCL reads that tree right, and flattening it would lose it.
void require_flattened(const report::TopologySection& t, const report::Gpu& g) {
  const auto* dev = t.device(g.bdf);
  if (!dev || !dev->parent_bdf) return;
  const auto* parent = t.device(*dev->parent_bdf);
  if (parent && parent->kind == report::PciKind::pcie_switch_port)
    throw InputError(fmt::format(
        "--nccl-topo: {} sits under the PCIe switch port {}: NCCL reads this tree as it is, and a file "
        "would flatten it; the file is for guests whose GPUs hang directly under the root complex",
        gpu_label(g), printable(parent->bdf)));
}

struct CpuGroup {
  std::int64_t numa_id = 0;
  std::set<int> cpus;
  std::vector<const report::Gpu*> gpus;
};

const report::Gpu* gpu_by_index(const report::TopologySection& t, std::int64_t index) {
  for (const auto& g : t.gpus)
    if (g.index == index) return &g;
  return nullptr;
}

std::vector<CpuGroup> stated_groups(const report::TopologySection& t, const NcclTopologyFacts& facts) {
  std::vector<CpuGroup> groups;
  std::set<std::int64_t> placed, numa_ids;
  for (const auto& split : facts.numa) {
    if (!numa_ids.insert(split.numa_id).second)
      throw InputError(fmt::format("--nccl-numa: NUMA node {} is stated twice; give each node once", split.numa_id));
    CpuGroup g{split.numa_id, split.cpus, {}};
    for (auto index : split.gpu_indices) {
      const auto* gpu = gpu_by_index(t, index);
      if (!gpu)
        throw InputError(fmt::format("--nccl-numa {}=...: there is no GPU {} (this machine has GPUs 0-{}); "
                                     "name GPUs by the index `interprobe topo` prints",
                                     split.numa_id, index, t.gpus.size() - 1));
      if (!placed.insert(index).second)
        throw InputError(fmt::format("--nccl-numa: GPU {} is in two NUMA nodes; give each GPU one", index));
      g.gpus.push_back(gpu);
    }
    groups.push_back(std::move(g));
  }
  for (const auto& gpu : t.gpus)
    if (!placed.count(gpu.index))
      throw InputError(fmt::format("--nccl-numa: {} is in no NUMA node; when the split is stated, place every GPU",
                                   gpu_label(gpu)));
  return groups;
}

// Without --nccl-numa: the NUMA nodes the guest shows; a GPU whose node is hidden goes to the
// only node (or node 0, said in the notes).
std::vector<CpuGroup> probed_groups(const report::TopologySection& t, const NcclTopologyFacts& facts,
                                    std::vector<std::string>& notes) {
  std::map<std::int64_t, CpuGroup> by_node;
  std::vector<std::string> hidden;
  for (const auto& gpu : t.gpus) {
    std::int64_t node = gpu.numa_node.value_or(0);
    if (!gpu.numa_node) hidden.push_back(std::to_string(gpu.index));
    auto& g = by_node[node];
    g.numa_id = node;
    g.gpus.push_back(&gpu);
  }
  for (auto& [node, g] : by_node) {
    auto cpus = facts.probed_numa_cpus.find(node);
    g.cpus = cpus != facts.probed_numa_cpus.end() && facts.probed_numa_cpus.size() > 1 ? cpus->second : facts.all_cpus;
  }
  if (!hidden.empty())
    notes.push_back(fmt::format(
        "the guest hides the NUMA node of GPU(s) {} (numa_node -1): placed under NUMA node 0 with {} CPUs; if the "
        "host splits them across sockets, say so: --nccl-numa 0=0-3@0-23 --nccl-numa 1=4-7@24-47 (GPUs@CPUs)",
        fmt::join(hidden, ","), by_node.begin()->second.cpus.size()));
  std::vector<CpuGroup> groups;
  for (auto& [node, g] : by_node) groups.push_back(std::move(g));
  return groups;
}

std::string cpu_element(const CpuGroup& g, const NcclTopologyFacts& facts) {
  std::string affinity = cpumap_string(g.cpus);
  if (affinity.size() > 255)
    throw InputError(fmt::format("--nccl-topo: NUMA node {} has {} CPUs, whose cpumap ({} characters) is longer than "
                                 "the 255 NCCL's loader reads; state fewer CPUs with --nccl-numa",
                                 g.numa_id, g.cpus.size(), affinity.size()));
  std::string e = fmt::format("<cpu numaid=\"{}\" affinity=\"{}\" arch=\"{}\"", g.numa_id, affinity, facts.arch);
  if (facts.cpu_vendor) e += fmt::format(" vendor=\"{}\"", *facts.cpu_vendor);
  return e + ">";
}

std::string pci_link_attrs(double gts, std::int64_t width) {
  return fmt::format("link_speed=\"{}\" link_width=\"{}\"", nccl_link_speed_string(gts), width);
}

std::string pair_class_changes(const report::TopologySection& t, const std::vector<CpuGroup>& groups) {
  std::map<std::int64_t, std::int64_t> node_of;
  for (const auto& g : groups)
    for (const auto* gpu : g.gpus) node_of[gpu->index] = g.numa_id;
  std::map<std::string, int> moves;
  for (const auto& p : t.gpu_pairs) {
    if (p.nvlink_count > 0) continue;  // NVLink pairs talk over NVLink whatever the PCIe tree says
    std::string after = node_of[p.a_index] == node_of[p.b_index] ? "PIX" : "SYS";
    ++moves[fmt::format("{} -> {}", report::to_string(p.pcie_path), after)];
  }
  std::vector<std::string> parts;
  for (const auto& [move, n] : moves) parts.push_back(fmt::format("{} pairs {}", n, move));
  return parts.empty() ? "" : fmt::format("GPU pairs (PCIe path class as NCCL computes it): {}", fmt::join(parts, ", "));
}

}  // namespace

bool nccl_known_link_gts(double gts) { return nccl_rate(gts) != nullptr; }

std::string nccl_link_speed_string(double gts) {
  // Kernels before 5.7 wrote "32 GT/s", later ones "32.0 GT/s PCIe"; NCCL's table has both
  // for 2.5-32 but only the new form of 64 GT/s, so the old one is the most widely read.
  if (std::fabs(gts - 64) < 1e-6) return "64.0 GT/s PCIe";
  return fmt::format("{:g} GT/s", gts);
}

std::string cpumap_string(const std::set<int>& cpus) {
  int top = cpus.empty() ? 0 : *cpus.rbegin();
  int words = top / 32 + 1;
  std::vector<std::uint32_t> mask(static_cast<std::size_t>(words), 0);
  for (int c : cpus) mask[static_cast<std::size_t>(c / 32)] |= 1u << (c % 32);
  std::string out;
  for (int w = words - 1; w >= 0; --w) out += fmt::format("{}{:08x}", out.empty() ? "" : ",", mask[static_cast<std::size_t>(w)]);
  return out;
}

NcclTopologyFile nccl_topology_file(const report::TopologySection& t, const NcclTopologyFacts& facts) {
  if (t.gpus.empty())
    throw InputError("--nccl-topo: no NVIDIA GPU in this topology, so there is nothing for NCCL to place; run it "
                     "inside the GPU guest (or on its snapshot with --root)");
  if (facts.link_gts && !nccl_known_link_gts(*facts.link_gts))
    throw InputError(fmt::format("--nccl-link-speed {:g}: not a PCIe rate NCCL knows (2.5, 5, 8, 16, 32 or 64 GT/s); "
                                 "give the GPUs' real rate in GT/s, e.g. 32 for Gen5",
                                 *facts.link_gts));
  if (facts.link_width && (*facts.link_width < 1 || *facts.link_width > 32))
    throw InputError(fmt::format("--nccl-link-width {}: PCIe links have 1 to 32 lanes", *facts.link_width));
  NcclTopologyFile file;
  for (const auto& gpu : t.gpus) {
    if (!nccl_busid(gpu.bdf))
      throw InputError(fmt::format("--nccl-topo: {} has a bus address NCCL cannot match (it wants dddd:bb:dd.f in "
                                   "lower case, function 0, 4, 8 or c)",
                                   gpu_label(gpu)));
    require_flattened(t, gpu);
  }
  auto groups = facts.numa.empty() ? probed_groups(t, facts, file.notes) : stated_groups(t, facts);

  std::vector<std::string> lines = {"<system version=\"1\">"};
  std::map<std::string, int> link_moves;
  int switch_number = 0;
  for (const auto& g : groups) {
    lines.push_back("  " + cpu_element(g, facts));
    std::vector<std::string> gpu_lines;
    double switch_gts = 0;
    std::int64_t switch_width = 0;
    for (const auto* gpu : g.gpus) {
      GpuLinks l = gpu_links(t, *gpu);
      double gts = facts.link_gts.value_or(l.own_gts);
      std::int64_t width = facts.link_width.value_or(l.own_width);
      if (!nccl_known_link_gts(gts))
        throw InputError(fmt::format("--nccl-topo: the link rate of {} is unknown ({:g} GT/s); state it with "
                                     "--nccl-link-speed GTS",
                                     gpu_label(*gpu), gts));
      if (l.seen_unknown || nccl_gbps(l.seen_gts, l.seen_width) != nccl_gbps(gts, width))
        ++link_moves[fmt::format("{}{} -> {}", l.seen_unknown ? "unknown to the guest, read by NCCL as " : "",
                                 rate_text(l.seen_gts, l.seen_width), rate_text(gts, width))];
      switch_gts = std::max(switch_gts, gts);
      switch_width = std::max(switch_width, width);
      // NCCL takes the class from /sys for a bus id that exists there; the probed one keeps the file true.
      const auto* dev = t.device(gpu->bdf);
      std::string pci_class = dev && dev->class_id && std::regex_match(*dev->class_id, std::regex("^03[0-9a-f]{4}$"))
                                  ? "0x" + *dev->class_id : "0x030200";
      gpu_lines.push_back(fmt::format("      <pci busid=\"{}\" class=\"{}\" {}/>", gpu->bdf, pci_class,
                                      pci_link_attrs(gts, width)));
    }
    // Invented bus ids, absent from any /sys (the form Azure's published files use).
    lines.push_back(fmt::format("    <pci busid=\"ffff:ff:{:02x}.0\" class=\"0x060400\" {}>", ++switch_number,
                                pci_link_attrs(switch_gts, switch_width)));
    lines.insert(lines.end(), gpu_lines.begin(), gpu_lines.end());
    lines.push_back("    </pci>");
    lines.push_back("  </cpu>");
  }
  lines.push_back("</system>");
  for (const auto& l : lines) file.xml += l + "\n";

  if (auto pairs = pair_class_changes(t, groups); !pairs.empty()) file.changes.push_back(pairs);
  for (const auto& [move, n] : link_moves) file.changes.push_back(fmt::format("GPU links: {} GPU(s) {}", n, move));
  std::vector<std::string> nodes;
  for (const auto& g : groups) {
    std::vector<std::string> gpus;
    for (const auto* gpu : g.gpus) gpus.push_back(std::to_string(gpu->index));
    nodes.push_back(fmt::format("node {}: GPUs {}, {} CPUs", g.numa_id, fmt::join(gpus, ","), g.cpus.size()));
  }
  bool numa_hidden = facts.probed_numa_cpus.size() <= 1;
  file.changes.push_back(fmt::format("NUMA: {} -> {}", numa_hidden ? "hidden or one node (NCCL: numaid -1 or 0)" : "as probed",
                                     fmt::join(nodes, "; ")));
  file.notes.push_back("use: export NCCL_TOPO_FILE=<this file> in every rank's environment (NCCL reads it before its "
                       "own detection; an unreadable file is skipped with an INFO line only)");
  file.notes.push_back("verify: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=GRAPH prints \"Loading topology file\", and "
                       "NCCL_TOPO_DUMP_FILE=/tmp/nccl-topo-dump.xml writes the tree NCCL used");
  file.notes.push_back("the file changes NCCL's model, not the hardware: P2P that the driver refuses stays off; measure "
                       "before and after with `interprobe allreduce`");
  return file;
}

}  // namespace interprobe::render
