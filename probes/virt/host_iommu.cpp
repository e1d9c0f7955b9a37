// The host side, for provisioning on a hypervisor: IOMMU settings of the kernel command line,
// IOMMU groups, NVIDIA GPUs handed to vfio-pci. Also the NUMA node count the guest rules need.
#include <cctype>

#include <fmt/format.h>

#include "common/host_root.hpp"
#include "common/text.hpp"
#include "probes/virt/virt_signals.hpp"

namespace interprobe::virt {

namespace {

bool is_node_dir(const std::string& name) {
  if (name.size() < 5 || name.rfind("node", 0) != 0) return false;
  for (std::size_t i = 4; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

}  // namespace

void read_host_iommu(const HostRoot& root, const PlatformSignals& platform, const PciSignals& pci,
                     report::VirtSection& out, EvidenceLog& log) {
  report::HostIommu& h = out.host;
  std::vector<std::string> iommu_tokens;
  if (platform.cmdline) {
    for (const auto& token : split_whitespace(*platform.cmdline)) {
      if (token == "--") break;  // what follows belongs to init
      auto eq = token.find('=');
      if (eq == std::string::npos) continue;
      std::string key = token.substr(0, eq);
      std::string value = sanitize(token.substr(eq + 1), 80);
      if (key == "intel_iommu") h.intel_iommu = value;
      else if (key == "amd_iommu") h.amd_iommu = value;
      else if (key == "iommu") h.iommu = value;
      else if (key == "iommu.passthrough") h.passthrough_mode = value == "1" || value == "y" || value == "on";
      else if (key == "vfio-pci.ids" || key == "vfio_pci.ids") h.vfio_pci_ids = value;
      else continue;
      iommu_tokens.push_back(sanitize(token, 100));
    }
    if (h.iommu && !h.passthrough_mode) {
      if (*h.iommu == "pt") h.passthrough_mode = true;
      else if (*h.iommu == "nopt") h.passthrough_mode = false;
    }
    if (h.amd_iommu && *h.amd_iommu == "pt") h.passthrough_mode = true;
  }
  h.iommu_group_count = static_cast<std::int64_t>(root.list("/sys/kernel/iommu_groups").size());
  for (const auto& d : pci.devices)
    if (d.kind == report::PciKind::gpu && d.vendor_id == "10de" && d.driver == std::optional<std::string>("vfio-pci"))
      h.vfio_pci_gpus.push_back(d.bdf);

  std::string joined;
  for (const auto& t : iommu_tokens) joined += (joined.empty() ? "" : " ") + t;
  log.add("/proc/cmdline (IOMMU)", "cmdline", joined.empty() ? "no IOMMU options" : joined,
          fmt::format("{} IOMMU group(s) under /sys/kernel/iommu_groups; {} NVIDIA GPU(s) bound to vfio-pci",
                      h.iommu_group_count, h.vfio_pci_gpus.size()));

  std::int64_t nodes = 0;
  for (const auto& name : root.list("/sys/devices/system/node"))
    if (is_node_dir(name)) ++nodes;
  if (nodes > 0) out.numa_node_count = nodes;
}

}  // namespace interprobe::virt
