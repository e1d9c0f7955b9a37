#pragma once
// Internal to probes/topology: a device's `kind` from its class, ids, port type and place in the
// tree (shared by the sysfs and hwloc XML readers).
#include <string>

#include "model/topology.hpp"

namespace interprobe {

// gpu, nvswitch, nic, infiniband, nvme, pcie_switch_port, root_port, host_bridge, other.
// `is_pcie` tells a conventional PCI bridge (i440fx guests) from a PCIe port when the port type
// is unknown.
report::PciKind classify_pci_kind(const report::PciDevice& dev, bool is_pcie);

}  // namespace interprobe
