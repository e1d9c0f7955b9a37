#pragma once
// The `topology` section (issue 3). PciDevice and PciLink are shared with the virtualization
// probe's passthrough audit, which reads the same inventory.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace interprobe::report {

struct PciLink {
  std::optional<double> current_gts, max_gts;  // GT/s; null when the kernel says Unknown
  std::optional<int> current_width, max_width; // lanes; null when 0 or absent
  std::optional<double> current_gbps, max_gbps;  // hwloc convention: GT/s x encoding x width / 8
  std::optional<bool> downtrained;             // current below max (speed or width)
};

struct PciDevice {
  std::string bdf;        // "0000:43:00.0"
  std::string vendor_id;  // "10de"
  std::string device_id;
  std::string class_id;   // "030200"
  std::optional<std::string> vendor_name, device_name;  // pci.ids through libpci
  std::string kind;       // gpu, nvswitch, nic, infiniband, nvme, pcie_switch_port, root_port, host_bridge, other
  std::optional<std::string> driver;
  std::optional<std::string> parent_bdf;  // bridge above; null on a root bus
  std::string root_bus;                   // "pci0000:40"
  std::optional<int> numa_node;           // null for -1 or absent
  std::optional<std::string> local_cpus;  // local_cpulist
  std::optional<int> iommu_group;
  PciLink link;
  std::vector<std::string> warnings;      // unreadable or garbage attributes
};

}  // namespace interprobe::report
