#pragma once
// The PCI tree of an inventory: ancestors, switches, and the nvidia-smi path class between two
// devices (docs/reference.md §4).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/topology.hpp"

namespace interprobe {

// Path classes from nearest to farthest, as `nvidia-smi topo -m` names them.
enum class PcieClass { same_device, pix, pxb, phb, node, sys, unknown };
report::PciePath to_pcie_path(PcieClass c);
const char* to_string(PcieClass c);   // to_string(to_pcie_path(c)): "X", "PIX", ... "unknown"
int rank_of(PcieClass c);             // 0 (X) .. 6 (unknown), for "nearest" comparisons

class PciTree {
 public:
  explicit PciTree(const std::vector<report::PciDevice>& devices);

  const report::PciDevice* find(const std::string& bdf) const;
  // Bridges above a device, from the one directly above up to the bridge on the root bus. Stops
  // at a parent missing from the inventory or at a cycle (a tree built from garbage).
  std::vector<const report::PciDevice*> ancestors(const std::string& bdf) const;

  // PIX: one switch (its upstream and downstream ports count as one) is the deepest common bridge;
  // PXB: more than one switch on the way; PHB: same root bus, no common bridge; NODE/SYS:
  // different root buses with equal/different NUMA nodes; unknown when a NUMA node is hidden (-1)
  // or the device's place in the tree could not be read.
  PcieClass classify(const std::string& a, const std::string& b) const;
  // Slowest PCIe link between the two (GB/s, hwloc convention). Per link: the maximum speed (idle
  // NVIDIA GPUs drop to 2.5 GT/s) at the negotiated width; QEMU's emulated bridges (synthetic
  // link registers) are skipped; null when no link on the path is known.
  std::optional<double> bottleneck_gbps(const std::string& a, const std::string& b) const;

  // The switch a bridge belongs to: a downstream port maps to its upstream port; anything else to
  // itself. Uses the PCIe port type when config space was readable, the tree shape otherwise.
  std::string switch_of(const report::PciDevice& bridge) const;

 private:
  bool is_downstream_port(const report::PciDevice& bridge) const;
  std::vector<const report::PciDevice*> path_bridges(const std::string& a, const std::string& b,
                                                      const report::PciDevice** common) const;
  std::map<std::string, const report::PciDevice*> by_bdf_;
};

// A link's usable rate for path bottlenecks (see bottleneck_gbps); null when unknown.
std::optional<double> link_capacity_gbps(const report::PciLink& link);

}  // namespace interprobe
