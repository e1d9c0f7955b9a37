#include "probes/topology/pci_tree.hpp"

#include <algorithm>
#include <set>

#include "probes/topology/pci_link.hpp"

namespace interprobe {

report::PciePath to_pcie_path(PcieClass c) {
  using report::PciePath;
  switch (c) {
    case PcieClass::same_device: return PciePath::X;
    case PcieClass::pix: return PciePath::PIX;
    case PcieClass::pxb: return PciePath::PXB;
    case PcieClass::phb: return PciePath::PHB;
    case PcieClass::node: return PciePath::NODE;
    case PcieClass::sys: return PciePath::SYS;
    case PcieClass::unknown: return PciePath::unknown;
  }
  return PciePath::unknown;
}

const char* to_string(PcieClass c) {
  return report::to_string(to_pcie_path(c));
}

int rank_of(PcieClass c) { return static_cast<int>(c); }

std::optional<double> link_capacity_gbps(const report::PciLink& link) {
  std::optional<double> gts = link.max_gts ? link.max_gts : link.current_gts;
  std::optional<std::int64_t> width = link.current_lanes ? link.current_lanes : link.max_lanes;
  if (gts && width) return link_gbps(*gts, *width);
  // hwloc XML gives only a rate in GB/s.
  if (link.max_gbps) return link.max_gbps;
  return link.current_gbps;
}

PciTree::PciTree(const std::vector<report::PciDevice>& devices) {
  for (const auto& d : devices) by_bdf_.emplace(d.bdf, &d);
}

const report::PciDevice* PciTree::find(const std::string& bdf) const {
  auto it = by_bdf_.find(bdf);
  return it == by_bdf_.end() ? nullptr : it->second;
}

std::vector<const report::PciDevice*> PciTree::ancestors(const std::string& bdf) const {
  std::vector<const report::PciDevice*> chain;
  std::set<std::string> seen{bdf};
  const report::PciDevice* dev = find(bdf);
  while (dev && dev->parent_bdf) {
    if (!seen.insert(*dev->parent_bdf).second) break;
    dev = find(*dev->parent_bdf);
    if (dev) chain.push_back(dev);
  }
  return chain;
}

bool PciTree::is_downstream_port(const report::PciDevice& bridge) const {
  if (bridge.port_type) return *bridge.port_type == report::PciePortType::downstream;
  if (bridge.kind != report::PciKind::pcie_switch_port) return false;
  // Without config space: switch ports alternate upstream/downstream below a root port, so count
  // the switch ports between this one and the first non-switch bridge above it.
  int switch_ports_above = 0;
  for (const auto* up : ancestors(bridge.bdf)) {
    if (up->kind != report::PciKind::pcie_switch_port) break;
    ++switch_ports_above;
  }
  return switch_ports_above % 2 == 1;
}

std::string PciTree::switch_of(const report::PciDevice& bridge) const {
  if (is_downstream_port(bridge) && bridge.parent_bdf) return *bridge.parent_bdf;
  return bridge.bdf;
}

std::vector<const report::PciDevice*> PciTree::path_bridges(const std::string& a, const std::string& b,
                                                            const report::PciDevice** common) const {
  auto up_a = ancestors(a);
  auto up_b = ancestors(b);
  std::set<std::string> in_b;
  for (const auto* d : up_b) in_b.insert(d->bdf);
  *common = nullptr;
  std::vector<const report::PciDevice*> below;
  for (const auto* d : up_a) {
    if (in_b.count(d->bdf)) {
      *common = d;
      break;
    }
    below.push_back(d);
  }
  for (const auto* d : up_b) {
    if (*common && d->bdf == (*common)->bdf) break;
    below.push_back(d);
  }
  return below;
}

PcieClass PciTree::classify(const std::string& a, const std::string& b) const {
  if (a == b) return PcieClass::same_device;
  const auto* da = find(a);
  const auto* db = find(b);
  if (!da || !db || !da->root_bus || !db->root_bus) return PcieClass::unknown;
  if (da->root_bus != db->root_bus) {
    if (!da->numa_node || !db->numa_node) return PcieClass::unknown;
    return *da->numa_node == *db->numa_node ? PcieClass::node : PcieClass::sys;
  }
  const report::PciDevice* common = nullptr;
  auto below = path_bridges(a, b, &common);
  if (!common) return PcieClass::phb;
  std::set<std::string> switches{switch_of(*common)};
  for (const auto* d : below) switches.insert(switch_of(*d));
  return switches.size() == 1 ? PcieClass::pix : PcieClass::pxb;
}

std::optional<double> PciTree::bottleneck_gbps(const std::string& a, const std::string& b) const {
  const auto* da = find(a);
  const auto* db = find(b);
  if (!da || !db || a == b) return std::nullopt;
  const report::PciDevice* common = nullptr;
  auto on_path = path_bridges(a, b, &common);
  on_path.push_back(da);
  on_path.push_back(db);
  std::optional<double> slowest;
  // Every device below the common bridge has its own link on the path (a downstream port's files
  // describe the link to its child, an upstream port's the link to the port above); the common
  // bridge's files describe a link off the path or one already counted.
  for (const auto* d : on_path) {
    // QEMU's emulated bridges (1b36:*) advertise synthetic link registers (a pcie-root-port says
    // 16 GT/s x32 above a Gen5 GPU); the device's own registers describe the real link.
    if (d->vendor_id == "1b36" && d != da && d != db) continue;
    if (auto gbps = link_capacity_gbps(d->link)) slowest = slowest ? std::min(*slowest, *gbps) : *gbps;
  }
  return slowest;
}

}  // namespace interprobe
