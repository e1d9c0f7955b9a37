// Live NVML queries for the topology (dlopen'd; nothing here links against NVML).
#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "interprobe/build_config.hpp"
#include "common/dynlib.hpp"
#include "common/host_root.hpp"
#include "probes/topology/nvml_api.hpp"
#include "probes/topology/nvml_topology.hpp"
#include "probes/topology/pci_inventory.hpp"

namespace interprobe {

namespace {

struct NvmlEntryPoints {
  nvml::InitV2Fn* init = nullptr;
  nvml::ShutdownFn* shutdown = nullptr;
  nvml::ErrorStringFn* error_string = nullptr;
  nvml::SystemGetDriverVersionFn* driver_version = nullptr;
  nvml::DeviceGetCountV2Fn* count = nullptr;
  nvml::DeviceGetHandleByIndexV2Fn* handle_by_index = nullptr;
  nvml::DeviceGetPciInfoV3Fn* pci_info = nullptr;
  nvml::DeviceGetNameFn* name = nullptr;
  nvml::DeviceGetUuidFn* uuid = nullptr;
  nvml::DeviceGetMemoryInfoFn* memory = nullptr;
  nvml::DeviceGetBar1MemoryInfoFn* bar1 = nullptr;
  nvml::DeviceGetVirtualizationModeFn* virtualization_mode = nullptr;
  nvml::DeviceGetNvLinkStateFn* nvlink_state = nullptr;
  nvml::DeviceGetNvLinkVersionFn* nvlink_version = nullptr;
  nvml::DeviceGetCudaComputeCapabilityFn* compute_capability = nullptr;
  nvml::DeviceGetNvLinkRemotePciInfoV2Fn* nvlink_remote_pci = nullptr;
  nvml::DeviceGetNvLinkRemoteDeviceTypeFn* nvlink_remote_type = nullptr;
  nvml::DeviceGetP2PStatusFn* p2p_status = nullptr;

  explicit NvmlEntryPoints(const DynamicLibrary& dl)
      : init(dl.symbol<nvml::InitV2Fn>("nvmlInit_v2")),
        shutdown(dl.symbol<nvml::ShutdownFn>("nvmlShutdown")),
        error_string(dl.symbol<nvml::ErrorStringFn>("nvmlErrorString")),
        driver_version(dl.symbol<nvml::SystemGetDriverVersionFn>("nvmlSystemGetDriverVersion")),
        count(dl.symbol<nvml::DeviceGetCountV2Fn>("nvmlDeviceGetCount_v2")),
        handle_by_index(dl.symbol<nvml::DeviceGetHandleByIndexV2Fn>("nvmlDeviceGetHandleByIndex_v2")),
        pci_info(dl.symbol<nvml::DeviceGetPciInfoV3Fn>("nvmlDeviceGetPciInfo_v3")),
        name(dl.symbol<nvml::DeviceGetNameFn>("nvmlDeviceGetName")),
        uuid(dl.symbol<nvml::DeviceGetUuidFn>("nvmlDeviceGetUUID")),
        memory(dl.symbol<nvml::DeviceGetMemoryInfoFn>("nvmlDeviceGetMemoryInfo")),
        bar1(dl.symbol<nvml::DeviceGetBar1MemoryInfoFn>("nvmlDeviceGetBAR1MemoryInfo")),
        virtualization_mode(dl.symbol<nvml::DeviceGetVirtualizationModeFn>("nvmlDeviceGetVirtualizationMode")),
        nvlink_state(dl.symbol<nvml::DeviceGetNvLinkStateFn>("nvmlDeviceGetNvLinkState")),
        nvlink_version(dl.symbol<nvml::DeviceGetNvLinkVersionFn>("nvmlDeviceGetNvLinkVersion")),
        compute_capability(dl.symbol<nvml::DeviceGetCudaComputeCapabilityFn>("nvmlDeviceGetCudaComputeCapability")),
        nvlink_remote_pci(dl.symbol<nvml::DeviceGetNvLinkRemotePciInfoV2Fn>("nvmlDeviceGetNvLinkRemotePciInfo_v2")),
        nvlink_remote_type(dl.symbol<nvml::DeviceGetNvLinkRemoteDeviceTypeFn>("nvmlDeviceGetNvLinkRemoteDeviceType")),
        p2p_status(dl.symbol<nvml::DeviceGetP2PStatusFn>("nvmlDeviceGetP2PStatus")) {}
};

report::NvLinkRemoteKind remote_kind_name(int type) {
  switch (type) {
    case nvml::kNvLinkDeviceGpu: return report::NvLinkRemoteKind::gpu;
    case nvml::kNvLinkDeviceSwitch: return report::NvLinkRemoteKind::nvswitch;
    case nvml::kNvLinkDeviceIbmNpu: return report::NvLinkRemoteKind::cpu;
    default: return report::NvLinkRemoteKind::unknown;
  }
}

void read_nvlinks(const NvmlEntryPoints& f, nvml::Device device, NvmlGpuRecord& gpu) {
  if (!f.nvlink_state) return;
  for (unsigned link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    int state = 0;
    // NOT_SUPPORTED / INVALID_ARGUMENT past the last link: the GPU has no more links.
    if (f.nvlink_state(device, link, &state) != nvml::kSuccess) break;
    report::NvLinkInfo info;
    info.link = static_cast<int>(link);
    info.active = state == nvml::kFeatureEnabled;
    unsigned version = 0;
    if (f.nvlink_version && f.nvlink_version(device, link, &version) == nvml::kSuccess) info.version = static_cast<int>(version);
    if (*info.active) {
      nvml::PciInfo remote{};
      if (f.nvlink_remote_pci && f.nvlink_remote_pci(device, link, &remote) == nvml::kSuccess)
        info.remote_bdf = normalize_bus_id(std::string(remote.busId, strnlen(remote.busId, sizeof remote.busId)));
      int type = nvml::kNvLinkDeviceUnknown;
      if (f.nvlink_remote_type && f.nvlink_remote_type(device, link, &type) == nvml::kSuccess) info.remote_kind = remote_kind_name(type);
    }
    gpu.nvlinks.push_back(std::move(info));
  }
}

}  // namespace

std::optional<NvmlTopology> query_live_nvml(std::string* reason) {
  std::string error;
  auto dl = DynamicLibrary::open(VendorLibrary::nvml, &error);
  if (!dl) {
    *reason = "NVML not loaded: " + error;
    return std::nullopt;
  }
  NvmlEntryPoints f(*dl);
  if (!f.init || !f.shutdown || !f.count || !f.handle_by_index || !f.pci_info) {
    *reason = fmt::format("{} lacks nvmlInit_v2/nvmlDeviceGetCount_v2/nvmlDeviceGetPciInfo_v3: not a usable NVML", dl->path());
    return std::nullopt;
  }
  if (nvml::Return rc = f.init(); rc != nvml::kSuccess) {
    *reason = fmt::format("nvmlInit_v2 failed: {} (code {}); is the NVIDIA kernel driver loaded?",
                          f.error_string ? f.error_string(rc) : "error", rc);
    return std::nullopt;
  }
  NvmlTopology out;
  out.source = report::NvmlSource::live;
  char text[nvml::kSystemDriverVersionBufferSize] = {};
  if (f.driver_version && f.driver_version(text, sizeof text) == nvml::kSuccess) out.driver_version = std::string(text);
  unsigned count = 0;
  if (f.count(&count) != nvml::kSuccess) count = 0;
  std::vector<std::pair<std::string, nvml::Device>> handles;
  for (unsigned i = 0; i < count; ++i) {
    nvml::Device device = nullptr;
    nvml::PciInfo pci{};
    if (f.handle_by_index(i, &device) != nvml::kSuccess || f.pci_info(device, &pci) != nvml::kSuccess) continue;
    auto bdf = normalize_bus_id(std::string(pci.busId, strnlen(pci.busId, sizeof pci.busId)));
    if (!bdf) continue;
    NvmlGpuRecord gpu;
    gpu.bdf = *bdf;
    char name[nvml::kDeviceNameBufferSize] = {};
    if (f.name && f.name(device, name, sizeof name) == nvml::kSuccess) gpu.name = std::string(name);
    char uuid[nvml::kDeviceUuidBufferSize] = {};
    if (f.uuid && f.uuid(device, uuid, sizeof uuid) == nvml::kSuccess) gpu.uuid = std::string(uuid);
    int major = 0, minor = 0;
    if (f.compute_capability && f.compute_capability(device, &major, &minor) == nvml::kSuccess && major >= 0 && major < 100 &&
        minor >= 0 && minor < 100)
      gpu.compute_capability = fmt::format("{}.{}", major, minor);
    nvml::Memory memory{};
    if (f.memory && f.memory(device, &memory) == nvml::kSuccess) gpu.memory_total_bytes = static_cast<std::int64_t>(memory.total);
    nvml::Bar1Memory bar1{};
    if (f.bar1 && f.bar1(device, &bar1) == nvml::kSuccess) gpu.bar1_total_bytes = static_cast<std::int64_t>(bar1.bar1Total);
    int mode = 0;
    if (f.virtualization_mode && f.virtualization_mode(device, &mode) == nvml::kSuccess) gpu.virtualization_mode = virtualization_mode_name(mode);
    read_nvlinks(f, device, gpu);
    out.gpus.push_back(std::move(gpu));
    handles.emplace_back(*bdf, device);
  }
  std::sort(handles.begin(), handles.end(), [](const auto& x, const auto& y) { return bdf_less(x.first, y.first); });
  if (f.p2p_status) {
    auto status = [&](nvml::Device a, nvml::Device b, int index) -> std::optional<report::P2pCapability> {
      int value = 0;
      if (f.p2p_status(a, b, index, &value) != nvml::kSuccess) return std::nullopt;
      return p2p_status_name(value);
    };
    for (std::size_t i = 0; i < handles.size(); ++i) {
      for (std::size_t j = i + 1; j < handles.size(); ++j) {
        NvmlP2pRecord rec;
        rec.a_bdf = handles[i].first;
        rec.b_bdf = handles[j].first;
        rec.status.read = status(handles[i].second, handles[j].second, nvml::kP2pCapsRead);
        rec.status.write = status(handles[i].second, handles[j].second, nvml::kP2pCapsWrite);
        rec.status.atomics = status(handles[i].second, handles[j].second, nvml::kP2pCapsAtomics);
        rec.status.nvlink = status(handles[i].second, handles[j].second, nvml::kP2pCapsNvlink);
        out.p2p.push_back(std::move(rec));
      }
    }
  }
  f.shutdown();
  return out;
}

std::optional<NvmlTopology> load_nvml_topology(const HostRoot& root, std::string* reason, std::vector<std::string>& warnings) {
  if (root.is_live()) {
#if INTERPROBE_HAVE_NVML
    // One query per process: topology, virtualization and snapshot all ask, and nvmlInit on
    // an 8-GPU machine without persistence mode can take a second.
    static std::mutex mutex;
    static std::optional<std::pair<std::optional<NvmlTopology>, std::string>> cached;
    std::lock_guard lock(mutex);
    if (!cached) {
      std::string why;
      auto data = query_live_nvml(&why);
      cached.emplace(std::move(data), std::move(why));
    }
    *reason = cached->second;
    return cached->first;
#else
    *reason = "NVML support compiled out: rebuild with -DINTERPROBE_WITH_NVML=ON";
    return std::nullopt;
#endif
  }
  FileRead recording = root.read(kNvmlRecordingPath);
  if (!recording.ok()) {
    *reason = fmt::format("replaying a --root tree without a recording at {} ({})", kNvmlRecordingPath, to_string(recording.failure));
    return std::nullopt;
  }
  auto data = parse_nvml_recording(*recording.content, reason);
  if (!data) warnings.push_back(fmt::format("{}: {}; NVML data ignored", kNvmlRecordingPath, *reason));
  return data;
}

}  // namespace interprobe
