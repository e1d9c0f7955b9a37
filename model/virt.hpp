#pragma once
// The `virtualization` section (issue 4): what the machine runs on, in systemd-detect-virt's
// vocabulary, the evidence behind the verdict, and how each NVIDIA GPU was passed through.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/topology.hpp"
#include "model/vocabulary.hpp"

namespace interprobe::report {

// How a GPU is attached to the (guest's) PCI tree.
enum class Attachment {
  root_bus_integrated,  // an integrated endpoint on the root bus: link registers zeroed
  root_bus,
  emulated_root_port,
  emulated_switch,
  real_root_port,
  real_switch,
  hyperv_vpci,
  unknown,
};
INTERPROBE_DECLARE_ENUM(Attachment);

// Whether the hypervisor injected NVIDIA's GPUDirect P2P clique capability.
enum class P2pClique { present, absent, unknown };
INTERPROBE_DECLARE_ENUM(P2pClique);

enum class Confidence { high, medium, low };
INTERPROBE_DECLARE_ENUM(Confidence);

// One signal that was read: where, what it said, and what it means for the verdict.
struct VirtEvidence {
  std::string source;   // "cpuid 0x40000000", "/sys/class/dmi/id/sys_vendor", "pci 8086:0d57"
  // cpuid, dmi, smbios, acpi, pci, xen, hypervisor_sysfs, device_tree, sysinfo, cpuinfo,
  // container_marker, container_manager, cgroup, cgroupns, environment, cmdline, confidential
  std::string family;
  std::string value;    // what was read (sanitized); "absent"; "unknown: needs root"
  // "kvm", "vm", "none", "container docker", "product Firecracker", "nothing", "warning: ..."
  std::string implies;
};

struct PciBar {
  std::int64_t index = 0;  // 0..5 as in the `resource` file
  std::int64_t size_bytes = 0;
  bool prefetchable = false;
  bool is_64bit = false;
};

// ACS on one bridge above a GPU. Request/completion redirect sends peer-to-peer traffic up to
// the root complex (slower, and a source of hangs when the IOMMU does not expect it).
struct BridgeAcs {
  std::string bdf;
  std::string vendor_device;              // "1b36:000c"
  std::optional<bool> acs_present;        // null: config space not readable
  std::optional<bool> p2p_redirect;       // RR or CR enabled
  std::optional<std::string> acs_enabled; // enabled control bits, "SV RR CR UF"; "" none
  std::optional<std::string> unknown_reason;  // "unknown: needs root"
};

struct GpuPassthrough {
  std::string bdf;
  std::string vendor_device;  // "10de:2335"
  std::optional<std::string> device_name;
  std::optional<std::string> driver;
  Attachment attachment = Attachment::unknown;
  std::string attachment_detail;
  std::vector<std::string> path_above;  // "0000:00:1c.0 1b36:000c root_port", nearest first
  std::optional<bool> link_synthetic;   // true: speeds come from an emulated port or are zeroed
  std::optional<std::string> link_detail;
  std::optional<double> gpu_max_gts, gpu_current_gts;
  std::optional<std::int64_t> gpu_max_lanes;
  std::optional<double> port_max_gts;   // the bridge directly above, null on a root bus
  bool numa_exposed = false;
  std::optional<std::int64_t> numa_node;
  std::optional<std::int64_t> iommu_group;
  std::vector<std::string> iommu_group_peers;  // other functions in the same group
  P2pClique p2p_clique = P2pClique::unknown;
  std::optional<std::string> p2p_clique_reason;  // why unknown: "needs root", a config space failure
  std::optional<std::int64_t> p2p_clique_id;
  std::optional<std::int64_t> p2p_capability_offset;
  std::optional<VirtualizationMode> nvml_virtualization_mode;  // null without NVML
  std::optional<std::string> nvml_reason;
  std::vector<PciBar> bars;
  std::optional<std::int64_t> bar1_bytes;    // the framebuffer aperture (largest prefetchable BAR)
  std::optional<std::int64_t> memory_bytes;  // GPU memory from NVML; null without it
  std::optional<bool> large_bar;             // the aperture covers the whole GPU memory
  std::vector<BridgeAcs> acs_above;
};

// What a hypervisor host shows: IOMMU mode and GPUs handed to vfio-pci.
struct HostIommu {
  std::optional<std::string> intel_iommu;   // value of intel_iommu= on the kernel command line
  std::optional<std::string> amd_iommu;     // amd_iommu=
  std::optional<std::string> iommu;         // iommu= (pt, on, off, ...)
  std::optional<bool> passthrough_mode;     // iommu=pt or iommu.passthrough=1
  std::optional<std::string> vfio_pci_ids;  // vfio-pci.ids=
  std::int64_t iommu_group_count = 0;       // entries of /sys/kernel/iommu_groups
  std::vector<std::string> vfio_pci_gpus;   // BDFs of NVIDIA GPUs bound to vfio-pci
};

struct VirtSection {
  std::string hypervisor = "none";  // systemd-detect-virt --vm
  std::string container = "none";   // systemd-detect-virt --container
  std::optional<std::string> product;          // "Firecracker", "Proxmox VE", "AWS EC2 (Nitro)"
  std::optional<std::string> machine_type;     // q35, i440fx, microvm, arm-virt
  std::optional<std::string> machine_version;  // "pc-q35-8.1"
  std::optional<std::string> xen_role;         // dom0, domU
  std::optional<std::string> confidential;     // SEV, SEV-ES, SEV-SNP, TDX
  Confidence confidence = Confidence::low;      // of `hypervisor`
  Confidence container_confidence = Confidence::low;
  bool privileged = false;                     // root-only signals were readable
  std::optional<std::int64_t> numa_node_count;  // nodes this kernel sees
  std::vector<std::string> conflicts;
  std::vector<VirtEvidence> evidence;
  HostIommu host;
  std::vector<GpuPassthrough> gpus;
};

}  // namespace interprobe::report
