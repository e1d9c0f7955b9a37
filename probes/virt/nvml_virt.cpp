// NVML's view of each GPU, live root only: virtualization mode (passthrough, vGPU ...), memory
// size and BAR1 size. NVML is dlopen'd; without it the fields stay null with the reason.
#include <fmt/format.h>

#include "interprobe/build_config.hpp"
#include "probes/common/dynlib.hpp"
#include "probes/common/host_root.hpp"
#include "probes/common/nvml_api.hpp"
#include "probes/topology/nvml_topology.hpp"
#include "probes/virt/virt_signals.hpp"

namespace interprobe::virt {

namespace {

void set_reason(report::VirtSection& out, const std::string& why) {
  for (auto& g : out.gpus) g.nvml_reason = why;
}

}  // namespace

void add_nvml_details(const HostRoot& root, report::VirtSection& out) {
  if (out.gpus.empty()) return;
  if (!root.is_live()) {
    set_reason(out, "replaying a --root tree: NVML not queried");
    return;
  }
#if !INTERPROBE_HAVE_NVML
  set_reason(out, "compiled out: rebuild with -DINTERPROBE_WITH_NVML=ON");
#else
  std::string error;
  auto dl = DynamicLibrary::open(VendorLibrary::nvml, &error);
  if (!dl) {
    set_reason(out, "NVML not loaded: " + error);
    return;
  }
  auto init = dl->symbol<nvml::InitV2Fn>("nvmlInit_v2");
  auto shutdown = dl->symbol<nvml::ShutdownFn>("nvmlShutdown");
  auto by_bus = dl->symbol<nvml::DeviceGetHandleByPciBusIdV2Fn>("nvmlDeviceGetHandleByPciBusId_v2");
  auto get_mode = dl->symbol<nvml::DeviceGetVirtualizationModeFn>("nvmlDeviceGetVirtualizationMode");
  auto get_memory = dl->symbol<nvml::DeviceGetMemoryInfoFn>("nvmlDeviceGetMemoryInfo");
  auto get_bar1 = dl->symbol<nvml::DeviceGetBar1MemoryInfoFn>("nvmlDeviceGetBAR1MemoryInfo");
  if (!init || !shutdown || !by_bus) {
    set_reason(out, dl->path() + " lacks nvmlInit_v2/nvmlDeviceGetHandleByPciBusId_v2: not a usable NVML");
    return;
  }
  if (nvml::Return rc = init(); rc != nvml::kSuccess) {
    set_reason(out, fmt::format("nvmlInit_v2 failed (code {}); is the NVIDIA kernel driver loaded?", rc));
    return;
  }
  for (auto& g : out.gpus) {
    nvml::Device device = nullptr;
    if (nvml::Return rc = by_bus(g.bdf.c_str(), &device); rc != nvml::kSuccess) {
      g.nvml_reason = fmt::format("nvmlDeviceGetHandleByPciBusId_v2({}) failed (code {}); bound to vfio-pci?", g.bdf, rc);
      continue;
    }
    int mode = -1;
    if (get_mode && get_mode(device, &mode) == nvml::kSuccess) g.nvml_virtualization_mode = virtualization_mode_name(mode).value_or("unknown");
    nvml::Memory memory{};
    if (get_memory && get_memory(device, &memory) == nvml::kSuccess)
      g.memory_bytes = static_cast<std::int64_t>(memory.total);
    nvml::Bar1Memory bar1{};
    if (!g.bar1_bytes && get_bar1 && get_bar1(device, &bar1) == nvml::kSuccess)
      g.bar1_bytes = static_cast<std::int64_t>(bar1.bar1Total);
    if (g.memory_bytes && g.bar1_bytes) g.large_bar = *g.bar1_bytes >= *g.memory_bytes;
  }
  shutdown();
#endif
}

}  // namespace interprobe::virt
