#pragma once
// The `topology` section (issue 3). PciDevice and PciLink are shared with the virtualization
// probe's passthrough audit, which reads the same inventory.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/vocabulary.hpp"

namespace interprobe::report {

// What a PCI function is, from its class, ids, port type and place in the tree.
enum class PciKind { gpu, nvswitch, nic, infiniband, nvme, pcie_switch_port, root_port, host_bridge, other };
INTERPROBE_DECLARE_ENUM(PciKind);

// PCIe Device/Port Type field of the PCI Express capability.
enum class PciePortType {
  endpoint,
  legacy_endpoint,
  root_port,
  upstream,
  downstream,
  pcie_to_pci_bridge,
  pci_to_pcie_bridge,
  rc_integrated_endpoint,
  rc_event_collector,
};
INTERPROBE_DECLARE_ENUM(PciePortType);

// nvidia-smi topo -m's path classes (their spellings): X self, PIX one switch, PXB several
// switches, PHB through the host bridge, NODE across host bridges of one NUMA node, SYS across
// the CPU interconnect.
enum class PciePath { X, PIX, PXB, PHB, NODE, SYS, unknown };
INTERPROBE_DECLARE_ENUM(PciePath);

// The kind of a NIC near a GPU (the network kinds of PciKind).
enum class NicKind { nic, infiniband };
INTERPROBE_DECLARE_ENUM(NicKind);

enum class PackagesSource { hwloc, sysfs, hwloc_xml, none };
INTERPROBE_DECLARE_ENUM(PackagesSource);

// Where the PCI inventory came from.
enum class TopologySource { sysfs, hwloc_xml };
INTERPROBE_DECLARE_ENUM(TopologySource);

enum class NvmlSource { live, recorded };
INTERPROBE_DECLARE_ENUM(NvmlSource);

enum class NvLinkRemoteKind { gpu, nvswitch, cpu, unknown };
INTERPROBE_DECLARE_ENUM(NvLinkRemoteKind);

// NVML's GPU virtualization mode.
enum class VirtualizationMode { none, passthrough, vgpu, host_vgpu, host_vsga, unknown };
INTERPROBE_DECLARE_ENUM(VirtualizationMode);

// NVML's P2P status of one capability between two GPUs.
enum class P2pCapability {
  ok,
  chipset_not_supported,
  gpu_not_supported,
  topology_not_supported,
  disabled_by_regkey,
  not_supported,
  unknown,
};
INTERPROBE_DECLARE_ENUM(P2pCapability);

struct PciLink {
  std::optional<double> current_gts, max_gts;  // GT/s; null when the kernel says Unknown
  std::optional<std::int64_t> current_lanes, max_lanes;  // null when 0 or absent
  std::optional<double> current_gbps, max_gbps;  // hwloc convention: GT/s x encoding x width / 8
  std::optional<bool> downtrained;             // current below max (speed or width)
};

struct PciDevice {
  std::string bdf;        // "0000:43:00.0"
  std::optional<std::string> vendor_id;  // "10de"; null when unreadable
  std::optional<std::string> device_id;
  std::optional<std::string> class_id;   // "030200"
  std::optional<std::string> vendor_name, device_name;  // pci.ids through libpci
  PciKind kind = PciKind::other;
  std::optional<std::string> driver;
  std::optional<std::string> parent_bdf;  // bridge above; null on a root bus
  std::optional<std::string> root_bus;    // "pci0000:40"
  std::optional<std::int64_t> numa_node;           // null for -1 or absent
  std::optional<std::string> local_cpus;  // local_cpulist
  std::optional<std::int64_t> iommu_group;
  // NICs: the RDMA device (mlx5_0) registered under the function, else its network interface
  // (ens1f0): the names nvidia-smi topo -m's NIC legend and NCCL_IB_HCA use.
  std::optional<std::string> network_name;
  PciLink link;
  // From config space; null when only the 64-byte header is readable (not root).
  std::optional<PciePortType> port_type;
  std::vector<std::string> warnings;      // unreadable or garbage attributes
};

// --- CPUs and NUMA ---------------------------------------------------------------------------

struct NumaNode {
  std::int64_t id = 0;
  std::optional<std::string> cpus;            // cpulist, "0-31,64-95"
  std::optional<std::int64_t> memory_bytes;   // MemTotal of the node
  std::vector<std::int64_t> distances;                 // SLIT row, in the order of CpuTopology::numa_nodes
};

struct CpuPackage {
  std::int64_t id = 0;                                 // physical package (socket) id
  std::optional<std::string> cpus;            // cpulist of the package
  std::optional<std::string> model;           // CPU model name
  std::vector<std::int64_t> numa_nodes;                // nodes whose CPUs sit in this package
};

struct CpuTopology {
  std::optional<std::int64_t> logical_cpus;
  std::optional<std::int64_t> cores;
  std::vector<CpuPackage> packages;
  PackagesSource packages_source = PackagesSource::none;
  std::vector<NumaNode> numa_nodes;
};

// --- GPUs and the paths between them -----------------------------------------------------------

struct NvLinkInfo {
  std::int64_t link = 0;                               // NVML link index
  std::optional<bool> active;
  std::optional<std::int64_t> version;                 // nvmlNvlinkVersion_t as NVML says it (7 = "5.0", also on H100)
  std::optional<std::string> remote_bdf;      // PCI address of the far end
  NvLinkRemoteKind remote_kind = NvLinkRemoteKind::unknown;
};

struct NearNic {
  std::string bdf;
  NicKind kind = NicKind::nic;
  PciePath pcie_path = PciePath::unknown;
};

struct Gpu {
  std::int64_t index = 0;                              // PCI bus order (CUDA_DEVICE_ORDER=PCI_BUS_ID)
  std::string bdf;
  std::optional<std::string> name;            // NVML name, else the pci.ids device name
  std::optional<std::string> uuid;            // NVML only
  std::optional<std::string> compute_capability;  // "9.0"; NVML only (decides the NVLink rate)
  std::optional<std::int64_t> memory_bytes;   // NVML only
  std::optional<std::int64_t> numa_node;
  std::optional<std::string> local_cpus;
  std::optional<VirtualizationMode> virtualization_mode;  // NVML only
  std::vector<NvLinkInfo> nvlinks;
  std::vector<NearNic> nearest_nics;          // NICs on the best PCIe path class from this GPU
  std::vector<NearNic> nic_paths;             // every NIC with its path class (the GPU-NIC cells of topo -m)
};

// NVML P2P status per capability.
struct P2pStatus {
  std::optional<P2pCapability> read, write, atomics, nvlink;
};

struct GpuPair {
  std::string a_bdf, b_bdf;
  std::int64_t a_index = 0, b_index = 0;
  PciePath pcie_path = PciePath::unknown;
  std::int64_t nvlink_count = 0;              // direct or through NVSwitches
  std::string path = "unknown";               // nvidia-smi topo -m label: NV18, PIX, ...
  // The path's bottleneck per direction: NVLinks x per-link rate (direct or through NVSwitch
  // ports) on an NVLinked pair, else the slowest PCIe link; null when the rate is unknown.
  std::optional<double> bottleneck_gbps;
  std::optional<double> pcie_bottleneck_gbps;  // slowest PCIe link on the PCIe path, NVLink or not
  std::optional<P2pStatus> p2p;               // NVML, null without it
};

struct TopologySection {
  TopologySource source = TopologySource::sysfs;
  std::string gpu_index_order = "pci_bus_id";
  std::optional<NvmlSource> nvml_source;      // null when NVML was not used
  std::optional<std::string> nvml_reason;     // why not, when it was not
  std::vector<PciDevice> pci_devices;
  CpuTopology cpu;
  std::vector<Gpu> gpus;
  std::vector<GpuPair> gpu_pairs;
  std::vector<std::string> warnings;          // every problem met while reading, one line each

  const PciDevice* device(const std::string& bdf) const {
    for (const auto& d : pci_devices)
      if (d.bdf == bdf) return &d;
    return nullptr;
  }
};

}  // namespace interprobe::report
