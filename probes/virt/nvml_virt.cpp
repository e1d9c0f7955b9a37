// NVML's view of each GPU: virtualization mode (passthrough, vGPU ...), memory size and BAR1
// size. Live NVML on the live root, the recorded nvml.json on a replayed one (the same source
// the topology probe uses); without either the fields stay null with the reason.
#include <algorithm>

#include "common/host_root.hpp"
#include "probes/topology/nvml_topology.hpp"
#include "probes/virt/virt_signals.hpp"

namespace interprobe::virt {

void add_nvml_details(const HostRoot& root, report::VirtSection& out) {
  if (out.gpus.empty()) return;
  std::string reason;
  std::vector<std::string> warnings;  // a malformed recording also lands in `reason`
  auto nvml = load_nvml_topology(root, &reason, warnings);
  for (auto& g : out.gpus) {
    if (!nvml) {
      g.nvml_reason = reason;
      continue;
    }
    auto it = std::find_if(nvml->gpus.begin(), nvml->gpus.end(), [&](const NvmlGpuRecord& r) { return r.bdf == g.bdf; });
    if (it == nvml->gpus.end()) {
      g.nvml_reason = g.bdf + " is not among NVML's devices (" + std::string(nvml->source ? report::to_string(*nvml->source) : "hwloc_xml") + "); bound to vfio-pci or hidden from the driver?";
      continue;
    }
    g.nvml_virtualization_mode = it->virtualization_mode;
    g.memory_bytes = it->memory_total_bytes;
    if (!g.bar1_bytes) g.bar1_bytes = it->bar1_total_bytes;
    if (g.memory_bytes && g.bar1_bytes) g.large_bar = *g.bar1_bytes >= *g.memory_bytes;
  }
}

}  // namespace interprobe::virt
