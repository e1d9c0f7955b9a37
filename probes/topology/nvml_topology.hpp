#pragma once
// What NVML says about the GPUs' topology: names, UUIDs, memory, NVLinks, P2P status per pair,
// virtualization mode. Comes from the live NVML (root "/" only, loaded with dlopen) or, for a
// replayed tree, from a recording at <root>/nvml.json (format below; `interprobe topo
// --record-nvml FILE` writes one on a live machine).
//
// Recording format (nvml_recording.cpp declares it, one INTERPROBE_JSON line per struct; all keys
// required unless marked; unknown keys are ignored; the writer writes every key, null when absent):
// {
//   "format": "interprobe-nvml-topology", "version": 1,
//   "driver_version": "550.54.15",                                   (optional)
//   "devices": [{
//     "pci_bus_id": "0000:18:00.0", "name": "NVIDIA H100 80GB HBM3",   (name, uuid, memory optional)
//     "uuid": "GPU-...", "memory_total_bytes": 85520809984,
//     "bar1_total_bytes": 137438953472,                                (optional)
//     "cuda_compute_capability": "9.0",                                (optional: decides the NVLink rate)
//     "virtualization_mode": "none",     (none|passthrough|vgpu|host_vgpu|host_vsga, optional)
//     "nvlinks": [{"link": 0, "active": true, "version": 7,    (nvmlNvlinkVersion_t: 7 = "5.0")
//                  "remote_pci_bus_id": "0000:05:00.0", "remote_device_type": "nvswitch"}]
//   }],                                  (remote_device_type: gpu|nvswitch|ibmnpu|unknown)
//   "p2p": [{"a": "0000:18:00.0", "b": "0000:2a:00.0",
//            "read": "ok", "write": "ok", "atomics": "ok", "nvlink": "ok"}]   (optional)
// }
// P2P values: ok, chipset_not_supported, gpu_not_supported, topology_not_supported,
// disabled_by_regkey, not_supported, unknown.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/topology.hpp"

namespace interprobe {

class HostRoot;

struct NvmlGpuRecord {
  std::string bdf;  // normalised "0000:18:00.0"
  std::optional<std::string> name, uuid;
  std::optional<std::string> compute_capability;  // "9.0" (nvmlDeviceGetCudaComputeCapability)
  std::optional<report::VirtualizationMode> virtualization_mode;
  std::optional<std::int64_t> memory_total_bytes, bar1_total_bytes;
  std::vector<report::NvLinkInfo> nvlinks;  // remote_kind from NVML's remote device type
};

struct NvmlP2pRecord {
  std::string a_bdf, b_bdf;
  report::P2pStatus status;
};

struct NvmlTopology {
  std::optional<report::NvmlSource> source;  // null when built from an hwloc XML export
  std::optional<std::string> driver_version;
  std::vector<NvmlGpuRecord> gpus;
  std::vector<NvmlP2pRecord> p2p;
};

inline constexpr const char* kNvmlRecordingPath = "/nvml.json";

// Live NVML on the live root (queried once per process, then the same answer); the recording
// on a replayed one. nullopt with `reason` otherwise.
// Never throws for a missing library, driver or recording; a malformed recording is a reason too.
std::optional<NvmlTopology> load_nvml_topology(const HostRoot& root, std::string* reason,
                                               std::vector<std::string>& warnings);
std::optional<NvmlTopology> query_live_nvml(std::string* reason);
std::optional<NvmlTopology> parse_nvml_recording(const std::string& text, std::string* reason);
std::string encode_nvml_recording(const NvmlTopology& data);
// The format as a JSON Schema: nvml_recording.cpp's declarations, with the keys a file must hold.
nlohmann::json nvml_recording_schema();

// "00000000:65:00.0" (NVML's 8-digit domain) -> "0000:65:00.0"; nullopt when it is no address.
std::optional<std::string> normalize_bus_id(const std::string& text);
// NVML enum values to the report's words.
report::P2pCapability p2p_status_name(int status);
std::optional<report::VirtualizationMode> virtualization_mode_name(int mode);

}  // namespace interprobe
