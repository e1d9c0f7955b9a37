// The `topology` section as a document: summary, the GPU/NIC path matrix (like
// `nvidia-smi topo -m`, with CPU/NUMA affinity columns), NUMA nodes, GPUs, and with --tree the
// PCI tree with each device's current/max link.
#include <algorithm>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "common/units.hpp"
#include "report/render/document.hpp"

namespace interprobe::render {

namespace {

using report::PciDevice;
using report::TopologySection;

std::string opt_int(const std::optional<int>& v) { return v ? std::to_string(*v) : "-"; }

std::string speed_text(const std::optional<double>& gts, const std::optional<int>& width) {
  if (!gts && !width) return "-";
  std::string speed = gts ? fmt::format("{:g} GT/s", *gts) : "? GT/s";
  return width ? fmt::format("{} x{}", speed, *width) : speed + " x?";
}

std::string link_text(const report::PciLink& l, bool current) {
  auto gts = current ? l.current_gts : l.max_gts;
  auto width = current ? l.current_lanes : l.max_lanes;
  auto gbps = current ? l.current_gbps : l.max_gbps;
  if (!gts && !width) return gbps ? fmt::format("{:.1f} GB/s", *gbps) : "-";
  std::string text = speed_text(gts, width);
  if (gbps) text += fmt::format(" ({:.1f} GB/s)", *gbps);
  return text;
}

Tone path_tone(const std::string& path) {
  if (path.rfind("NV", 0) == 0 || path == "PIX") return Tone::good;
  if (path == "PXB" || path == "PHB" || path == "X") return Tone::plain;
  if (path == "unknown") return Tone::warn;
  return Tone::dim;  // NODE, SYS
}

KeyValues summary(const TopologySection& s) {
  KeyValues kv;
  kv.add("source", s.source == report::TopologySource::sysfs ? "sysfs (PCI inventory read through the root)" : "hwloc XML export");
  std::map<std::string, int> kinds;
  for (const auto& d : s.pci_devices) ++kinds[report::to_string(d.kind)];
  std::string kind_list;
  for (const auto& [k, n] : kinds) kind_list += fmt::format("{}{} {}", kind_list.empty() ? "" : ", ", n, k);
  kv.add("PCI functions", fmt::format("{} ({})", s.pci_devices.size(), kind_list.empty() ? "none" : kind_list));
  kv.add("GPUs", s.gpus.empty() ? Cell("none", Tone::dim) : Cell(fmt::format("{} (index = PCI bus order)", s.gpus.size())));
  const auto& cpu = s.cpu;
  kv.add("CPUs", fmt::format("{} logical, {} cores, {} package(s) [{}], {} NUMA node(s)", opt_int(cpu.logical_cpus),
                             opt_int(cpu.cores), cpu.packages.size(), report::to_string(cpu.packages_source), cpu.numa_nodes.size()));
  if (!cpu.packages.empty() && cpu.packages.front().model) kv.add("CPU model", *cpu.packages.front().model);
  if (s.nvml_source) kv.add("NVML", *s.nvml_source == report::NvmlSource::live ? "live" : "recorded (nvml.json at the root of the tree)");
  else kv.add("NVML", Cell("not used: " + s.nvml_reason.value_or("-"), Tone::dim));
  if (!s.warnings.empty()) kv.add("warnings", Cell(fmt::format("{} (listed below)", s.warnings.size()), Tone::warn));
  return kv;
}

// Rows and columns: GPUs, then NICs, like nvidia-smi topo -m.
Table path_matrix(const TopologySection& s) {
  struct Endpoint {
    std::string label, bdf;
    const PciDevice* dev;
  };
  std::vector<Endpoint> ends;
  for (const auto& g : s.gpus) ends.push_back({fmt::format("GPU{}", g.index), g.bdf, s.device(g.bdf)});
  int nic = 0;
  for (const auto& d : s.pci_devices)
    if (d.kind == report::PciKind::nic || d.kind == report::PciKind::infiniband) ends.push_back({fmt::format("NIC{}", nic++), d.bdf, &d});
  std::map<std::pair<std::string, std::string>, std::string> label;
  for (const auto& p : s.gpu_pairs) {
    label[{p.a_bdf, p.b_bdf}] = p.path;
    label[{p.b_bdf, p.a_bdf}] = p.path;
  }
  // Reports before 2.2.0 kept only each GPU's nearest NICs.
  for (const auto& g : s.gpus)
    for (const auto& n : g.nic_paths.empty() ? g.nearest_nics : g.nic_paths)
      label[{g.bdf, n.bdf}] = label[{n.bdf, g.bdf}] = report::to_string(n.pcie_path);
  Table t{"path between devices (nvidia-smi topo -m legend below)", {""}, {Align::left}, {}};
  for (const auto& e : ends) {
    t.header.push_back(e.label);
    t.align.push_back(Align::right);
  }
  // Short names and no address column (the GPU table and the NIC legend give them): the matrix
  // of an 8-GPU, 8-NIC machine must fit 100 columns.
  t.header.insert(t.header.end(), {"CPUs", "NUMA"});
  for (const auto& row : ends) {
    std::vector<Cell> cells{Cell(row.label)};
    for (const auto& col : ends) {
      if (row.bdf == col.bdf) {
        cells.emplace_back("X");
        continue;
      }
      auto it = label.find({row.bdf, col.bdf});
      // NIC-NIC and GPU-NIC pairs beyond the nearest are not stored; say so rather than guess.
      std::string text = it == label.end() ? "." : it->second;
      if (text == "unknown") text = "?";
      cells.emplace_back(text, path_tone(it == label.end() ? "" : it->second));
    }
    cells.emplace_back(row.dev && row.dev->local_cpus ? *row.dev->local_cpus : "-");
    cells.emplace_back(row.dev && row.dev->numa_node ? std::to_string(*row.dev->numa_node) : "N/A");
    t.rows.push_back(std::move(cells));
  }
  return t;
}

// nvidia-smi topo -p2p's status words.
std::string p2p_word(const std::optional<report::P2pCapability>& c) {
  if (!c) return "-";
  switch (*c) {
    case report::P2pCapability::ok: return "OK";
    case report::P2pCapability::chipset_not_supported: return "CNS";
    case report::P2pCapability::gpu_not_supported: return "GNS";
    case report::P2pCapability::topology_not_supported: return "TNS";
    case report::P2pCapability::disabled_by_regkey: return "DR";
    case report::P2pCapability::not_supported: return "NS";
    case report::P2pCapability::unknown: return "U";
  }
  return "U";
}

// GPU x GPU, NVML's P2P read/write status per pair, as `nvidia-smi topo -p2p r` and `-p2p w`
// print it (one grid, "read/write" per cell): 28 pairs without P2P read at a glance.
Table p2p_status_matrix(const TopologySection& s) {
  std::map<std::pair<std::int64_t, std::int64_t>, const report::P2pStatus*> status;
  for (const auto& p : s.gpu_pairs)
    if (p.p2p) status[{p.a_index, p.b_index}] = status[{p.b_index, p.a_index}] = &*p.p2p;
  Table t{"P2P status read/write (NVML, as nvidia-smi topo -p2p r / w)", {""}, {Align::left}, {}};
  for (const auto& g : s.gpus) {
    t.header.push_back(fmt::format("GPU{}", g.index));
    t.align.push_back(Align::right);
  }
  for (const auto& row : s.gpus) {
    std::vector<Cell> cells{Cell(fmt::format("GPU{}", row.index))};
    for (const auto& col : s.gpus) {
      if (row.index == col.index) {
        cells.emplace_back("X");
        continue;
      }
      auto it = status.find({row.index, col.index});
      if (it == status.end()) {
        cells.emplace_back("-", Tone::dim);
        continue;
      }
      bool ok = it->second->read == report::P2pCapability::ok && it->second->write == report::P2pCapability::ok;
      cells.emplace_back(p2p_word(it->second->read) + "/" + p2p_word(it->second->write), ok ? Tone::good : Tone::warn);
    }
    t.rows.push_back(std::move(cells));
  }
  return t;
}

Paragraph p2p_legend() {
  return Paragraph{"OK = P2P supported; CNS = chipset not supported; GNS = GPU not supported; TNS = topology not supported; "
                   "DR = disabled by registry key (interprobe's word); NS = not supported; U = unknown; - = not reported. NVML's claim, not a "
                   "measurement: `interprobe bw --engine cuda` checks a real transfer per pair",
                   Tone::dim};
}

Paragraph legend() {
  return {"X = self; NV# = # bonded NVLinks (directly or through NVSwitches); PIX = at most one PCIe switch; "
          "PXB = several PCIe switches, no host bridge; PHB = through a PCIe host bridge (CPU); NODE = across host "
          "bridges within a NUMA node; SYS = across the CPU interconnect (QPI/UPI/xGMI); ? = locality hidden "
          "(numa_node -1); CPUs, NUMA = the device's CPU and NUMA affinity; . = not computed (NIC to NIC; GPU to NIC beyond the nearest in reports before schema 2.2)",
          Tone::dim};
}

// "NIC0: mlx5_0": the names NCCL_IB_HCA and nvidia-smi topo -m use, with the address.
Paragraph nic_legend(const TopologySection& s) {
  std::string text;
  int nic = 0;
  for (const auto& d : s.pci_devices) {
    if (d.kind != report::PciKind::nic && d.kind != report::PciKind::infiniband) continue;
    text += fmt::format("{}NIC{}: {} ({})", text.empty() ? "NIC legend: " : "; ", nic++, d.network_name.value_or("unnamed"), d.bdf);
  }
  return {text, Tone::dim};
}

Table gpu_table(const TopologySection& s) {
  Table t{"GPUs", {"GPU", "address", "name", "NUMA", "link now", "link max", "NVLinks", "nearest NIC", "UUID"}, {}, {}};
  for (const auto& g : s.gpus) {
    const PciDevice* d = s.device(g.bdf);
    int active = 0;
    for (const auto& l : g.nvlinks) active += l.active.value_or(true) ? 1 : 0;
    std::string nics;
    for (const auto& n : g.nearest_nics) nics += fmt::format("{}{} ({})", nics.empty() ? "" : ", ", n.bdf, report::to_string(n.pcie_path));
    t.rows.push_back({Cell(std::to_string(g.index)), Cell(g.bdf), Cell(or_dash(g.name)), Cell(opt_int(g.numa_node)),
                      Cell(d ? link_text(d->link, true) : "-"), Cell(d ? link_text(d->link, false) : "-"),
                      Cell(g.nvlinks.empty() ? "-" : std::to_string(active)), Cell(nics.empty() ? "-" : nics),
                      Cell(or_dash(g.uuid), Tone::dim)});
  }
  return t;
}

Table pair_table(const TopologySection& s) {
  Table t{"GPU pairs", {"pair", "path", "PCIe path", "NVLinks", "bottleneck", "PCIe bottleneck", "P2P read/write/atomics/nvlink"},
          {Align::left, Align::left, Align::left, Align::right, Align::right, Align::right, Align::left}, {}};
  for (const auto& p : s.gpu_pairs) {
    std::string p2p = "-";
    auto name = [](const std::optional<report::P2pCapability>& c) { return c ? std::string(report::to_string(*c)) : "-"; };
    if (p.p2p) p2p = fmt::format("{}/{}/{}/{}", name(p.p2p->read), name(p.p2p->write), name(p.p2p->atomics), name(p.p2p->nvlink));
    auto rate = [](const std::optional<double>& gbps) { return gbps ? fmt::format("{:.1f} GB/s", *gbps) : std::string("-"); };
    t.rows.push_back({Cell(fmt::format("GPU{}-GPU{}", p.a_index, p.b_index)), Cell(p.path, path_tone(p.path)), Cell(report::to_string(p.pcie_path)),
                      Cell(std::to_string(p.nvlink_count)), Cell(rate(p.bottleneck_gbps)), Cell(rate(p.pcie_bottleneck_gbps)),
                      Cell(p2p, p.p2p && p.p2p->read && *p.p2p->read != report::P2pCapability::ok ? Tone::warn : Tone::plain)});
  }
  return t;
}

Table numa_table(const TopologySection& s) {
  Table t{"NUMA nodes (SLIT distances)", {"node", "CPUs", "memory"}, {Align::left, Align::left, Align::right}, {}};
  for (const auto& n : s.cpu.numa_nodes) {
    t.header.push_back(fmt::format("to {}", n.id));
    t.align.push_back(Align::right);
  }
  for (const auto& n : s.cpu.numa_nodes) {
    std::vector<Cell> row{Cell(std::to_string(n.id)), Cell(or_dash(n.cpus)),
                          Cell(n.memory_bytes ? format_bytes(static_cast<std::uint64_t>(*n.memory_bytes)) : "-")};
    for (std::size_t i = 0; i < s.cpu.numa_nodes.size(); ++i)
      row.emplace_back(i < n.distances.size() ? std::to_string(n.distances[i]) : "-");
    t.rows.push_back(std::move(row));
  }
  return t;
}

// Root buses, then every device under its parent, drawn with tree glyphs.
Table pci_tree(const TopologySection& s) {
  Table t{"PCI tree (GPUs lower their link speed when idle: check `link now` under load)",
          {"device", "kind", "ids", "name", "link now", "link max", "driver", ""}, {}, {}};
  t.unwrapped_columns = 1;  // the tree drawing
  std::map<std::string, std::vector<const PciDevice*>> children;  // parent bdf or root bus -> devices
  std::vector<std::string> roots;
  for (const auto& d : s.pci_devices) {
    std::string key = d.parent_bdf && s.device(*d.parent_bdf) ? *d.parent_bdf : "bus:" + d.root_bus.value_or("?");
    if (key.rfind("bus:", 0) == 0 && std::find(roots.begin(), roots.end(), key) == roots.end()) roots.push_back(key);
    children[key].push_back(&d);
  }
  std::function<void(const std::string&, const std::string&, int)> walk = [&](const std::string& key, const std::string& prefix, int depth) {
    const auto& list = children[key];
    for (std::size_t i = 0; i < list.size(); ++i) {
      const PciDevice& d = *list[i];
      bool last = i + 1 == list.size();
      std::string name = d.device_name ? *d.device_name : "";
      if (d.vendor_name) name = name.empty() ? *d.vendor_name + " (device not in pci.ids)" : *d.vendor_name + " " + name;
      bool down = d.link.downtrained.value_or(false);
      t.rows.push_back({Cell(prefix + (last ? "└─ " : "├─ ") + d.bdf), Cell(report::to_string(d.kind)),
                        Cell(fmt::format("{}:{} {}", d.vendor_id.value_or("?"), d.device_id.value_or("?"), d.class_id.value_or("?")),
                             Tone::dim),
                        Cell(name.empty() ? "-" : name), Cell(link_text(d.link, true), down ? Tone::warn : Tone::plain),
                        Cell(link_text(d.link, false)), Cell(or_dash(d.driver), Tone::dim),
                        down ? Cell("downtrained", Tone::warn) : Cell(d.warnings.empty() ? "" : "warnings", Tone::warn)});
      if (depth < 64) walk(d.bdf, prefix + (last ? "   " : "│  "), depth + 1);
    }
  };
  for (const auto& root : roots) {
    t.rows.push_back({Cell(root.substr(4)), Cell("root bus", Tone::dim), Cell(""), Cell(""), Cell(""), Cell(""), Cell(""), Cell("")});
    walk(root, "", 0);
  }
  return t;
}

}  // namespace

void add_topology_view(const report::Report& r, Document& doc, const ViewOptions& views) {
  if (!r.topology) return;
  const TopologySection& s = *r.topology;
  Section sec{"topology", {}};
  // The matrix first, as nvidia-smi topo -m prints it: what operators look for.
  if (!s.gpus.empty()) {
    sec.blocks.push_back(path_matrix(s));
    sec.blocks.push_back(legend());
    if (auto nics = nic_legend(s); !nics.text.empty()) sec.blocks.push_back(std::move(nics));
  }
  sec.blocks.push_back(summary(s));
  if (!s.gpus.empty()) {
    sec.blocks.push_back(gpu_table(s));
    bool any_p2p = std::any_of(s.gpu_pairs.begin(), s.gpu_pairs.end(), [](const report::GpuPair& p) { return p.p2p.has_value(); });
    if (any_p2p) {
      sec.blocks.push_back(p2p_status_matrix(s));
      sec.blocks.push_back(p2p_legend());
    }
    if (!s.gpu_pairs.empty()) sec.blocks.push_back(pair_table(s));
  } else {
    sec.blocks.push_back(Paragraph{"no NVIDIA GPU on the PCI bus", Tone::dim});
  }
  if (!s.cpu.numa_nodes.empty()) sec.blocks.push_back(numa_table(s));
  if (views.topology_tree) sec.blocks.push_back(pci_tree(s));
  if (!s.warnings.empty()) {
    Table w{"warnings (device kept, field null)", {"warning"}, {}, {}};
    for (const auto& line : s.warnings) w.rows.push_back({Cell(line, Tone::warn)});
    sec.blocks.push_back(std::move(w));
  }
  doc.sections.push_back(std::move(sec));
}

}  // namespace interprobe::render
