#pragma once
// Internal to probes/topology: the PCI Express capability of a config space dump (readable past
// the 64-byte header only as root), used for the port type and for link fields sysfs lacks.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/topology.hpp"

namespace interprobe {

struct PcieCapabilityInfo {
  int port_type = -1;  // Device/Port Type field: 0 endpoint, 4 root port, 5 upstream, 6 downstream ...
  std::optional<double> max_gts, current_gts;
  std::optional<int> max_lanes, current_lanes;
};

std::optional<PcieCapabilityInfo> decode_pcie_capability(const std::vector<std::uint8_t>& config);
// "root_port", "upstream", "downstream", "endpoint", "legacy_endpoint", "rc_integrated_endpoint",
// "pcie_to_pci_bridge", "pci_to_pcie_bridge", "rc_event_collector"; nullopt for reserved values.
std::optional<report::PciePortType> port_type_name(int port_type);

}  // namespace interprobe
