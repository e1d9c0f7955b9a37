// The recorded-NVML file format (see nvml_topology.hpp) and NVML enum names. The file's structs
// below are the format, one INTERPROBE_JSON line each; the hand code converts them to and from
// NvmlTopology (normalised bus ids, the NVLink far end's kind).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/json_input.hpp"
#include "common/json_text.hpp"
#include "common/text.hpp"
#include "model/json_fields.hpp"
#include "model/schema_check.hpp"
#include "probes/topology/nvlink_rate.hpp"
#include "probes/topology/nvml_topology.hpp"
#include "probes/topology/pci_inventory.hpp"

namespace interprobe {

namespace nvml_file {

struct NvLink {
  std::int64_t link = 0;
  std::optional<bool> active;
  std::optional<std::int64_t> version;  // nvmlNvlinkVersion_t
  std::optional<std::string> remote_pci_bus_id;
  std::string remote_device_type = "unknown";  // kRemoteDeviceTypes
};

struct Device {
  std::string pci_bus_id;
  std::optional<std::string> name, uuid;
  std::optional<std::int64_t> memory_total_bytes, bar1_total_bytes;
  std::optional<std::string> cuda_compute_capability;
  std::optional<std::string> virtualization_mode;  // open: a newer driver's mode reads as `unknown`
  std::vector<NvLink> nvlinks;
};

struct P2p {
  std::string a, b;
  std::optional<report::P2pCapability> read, write, atomics, nvlink;
};

struct Recording {
  std::string format = "interprobe-nvml-topology";
  std::int64_t version = 1;
  std::optional<std::string> driver_version;
  std::vector<Device> devices;
  std::vector<P2p> p2p;
};

INTERPROBE_JSON(NvLink, link, active, version, remote_pci_bus_id, remote_device_type)
INTERPROBE_JSON(Device, pci_bus_id, name, uuid, memory_total_bytes, bar1_total_bytes, cuda_compute_capability,
                virtualization_mode, nvlinks)
INTERPROBE_JSON(P2p, a, b, read, write, atomics, nvlink)
INTERPROBE_JSON(Recording, format, version, driver_version, devices, p2p)

}  // namespace nvml_file

namespace {

using json = nlohmann::json;

// nvmlIntNvLinkDeviceType_t as the recording spells it; IBM's NPU is the report's `cpu`.
constexpr std::pair<const char*, report::NvLinkRemoteKind> kRemoteDeviceTypes[] = {
    {"gpu", report::NvLinkRemoteKind::gpu},
    {"nvswitch", report::NvLinkRemoteKind::nvswitch},
    {"ibmnpu", report::NvLinkRemoteKind::cpu},
    {"unknown", report::NvLinkRemoteKind::unknown}};

struct RecordingError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string bdf_at(const std::string& text, const std::string& where) {
  auto bdf = normalize_bus_id(text);
  if (!bdf) throw RecordingError(fmt::format("{}: {} is not a PCI address", where, json_excerpt(text, 40)));
  return *bdf;
}

NvmlGpuRecord gpu_of(const nvml_file::Device& d, const std::string& where) {
  NvmlGpuRecord gpu;
  gpu.bdf = bdf_at(d.pci_bus_id, where + ".pci_bus_id");
  gpu.name = d.name;
  gpu.uuid = d.uuid;
  if (d.virtualization_mode)
    gpu.virtualization_mode = report::parse_enum<report::VirtualizationMode>(*d.virtualization_mode).value_or(report::VirtualizationMode::unknown);
  gpu.memory_total_bytes = d.memory_total_bytes;
  gpu.bar1_total_bytes = d.bar1_total_bytes;
  gpu.compute_capability = d.cuda_compute_capability;
  if (gpu.compute_capability && !compute_capability_major(gpu.compute_capability))
    throw RecordingError(fmt::format("{}.cuda_compute_capability: {} is not MAJOR.MINOR (\"9.0\")", where,
                                     json_excerpt(*gpu.compute_capability, 40)));
  for (std::size_t i = 0; i < d.nvlinks.size(); ++i) {
    const nvml_file::NvLink& l = d.nvlinks[i];
    std::string link_at = fmt::format("{}.nvlinks[{}]", where, i);
    report::NvLinkInfo info{.link = l.link, .active = l.active, .version = l.version};
    if (l.remote_pci_bus_id) info.remote_bdf = bdf_at(*l.remote_pci_bus_id, link_at + ".remote_pci_bus_id");
    for (const auto& [name, kind] : kRemoteDeviceTypes)
      if (l.remote_device_type == name) info.remote_kind = kind;
    gpu.nvlinks.push_back(std::move(info));
  }
  return gpu;
}

}  // namespace

// The format as its declarations give it, with the keys a file must hold and the NVLink far
// end's words.
json nvml_recording_schema() {
  json s = report::schema_document<nvml_file::Recording>();
  const nvml_file::Recording envelope;
  s["properties"]["format"] = {{"const", envelope.format}};
  s["properties"]["version"] = {{"const", envelope.version}};
  s["required"] = {"format", "version", "devices"};
  s["$defs"]["device"]["required"] = {"pci_bus_id"};
  s["$defs"]["nv_link"]["required"] = {"link"};
  s["$defs"]["p2p"]["required"] = {"a", "b"};
  json& device_type = s["$defs"]["nv_link"]["properties"]["remote_device_type"];
  device_type = {{"enum", json::array()}};
  for (const auto& entry : kRemoteDeviceTypes) device_type["enum"].push_back(entry.first);
  return s;
}

std::optional<std::string> normalize_bus_id(const std::string& text) {
  std::string s = to_lower(trim(text));
  auto colon = s.find(':');
  if (colon == std::string::npos) return std::nullopt;
  // NVML writes an 8-digit domain; sysfs a 4-digit one unless the domain needs more.
  if (colon > 4) {
    std::size_t zeros = 0;
    while (zeros < colon - 4 && s[zeros] == '0') ++zeros;
    s = s.substr(zeros);
  }
  if (!is_pci_bdf(s)) return std::nullopt;
  return s;
}

// NVML's nvmlGpuP2PStatus_t values 0..6 in order.
report::P2pCapability p2p_status_name(int status) {
  using report::P2pCapability;
  static constexpr P2pCapability kByValue[] = {P2pCapability::ok, P2pCapability::chipset_not_supported,
                                               P2pCapability::gpu_not_supported, P2pCapability::topology_not_supported,
                                               P2pCapability::disabled_by_regkey, P2pCapability::not_supported,
                                               P2pCapability::unknown};
  if (status >= 0 && status <= 6) return kByValue[status];
  return P2pCapability::unknown;
}

std::optional<report::VirtualizationMode> virtualization_mode_name(int mode) {
  using report::VirtualizationMode;
  switch (mode) {
    case 0: return VirtualizationMode::none;
    case 1: return VirtualizationMode::passthrough;
    case 2: return VirtualizationMode::vgpu;
    case 3: return VirtualizationMode::host_vgpu;
    case 4: return VirtualizationMode::host_vsga;
    default: return std::nullopt;
  }
}

std::optional<NvmlTopology> parse_nvml_recording(const std::string& text, std::string* reason) {
  const nvml_file::Recording expected;
  try {
    json j = parse_json_bounded(text);
    if (!j.is_object()) throw RecordingError("expected a JSON object");
    if (j.value("format", json()) != expected.format) throw RecordingError(fmt::format("'format' is not \"{}\"", expected.format));
    if (j.value("version", json()) != expected.version)
      throw RecordingError(fmt::format("'version' is not {}; re-record with this interprobe", expected.version));
    static const json schema = nvml_recording_schema();
    if (auto violation = report::schema_violation(j, schema); !violation.empty()) throw RecordingError(violation);
    auto recording = j.get<nvml_file::Recording>();
    NvmlTopology out;
    out.source = report::NvmlSource::recorded;
    out.driver_version = recording.driver_version;
    for (std::size_t i = 0; i < recording.devices.size(); ++i)
      out.gpus.push_back(gpu_of(recording.devices[i], fmt::format("devices[{}]", i)));
    for (std::size_t i = 0; i < recording.p2p.size(); ++i) {
      const nvml_file::P2p& p = recording.p2p[i];
      const std::string where = fmt::format("p2p[{}]", i);
      out.p2p.push_back({bdf_at(p.a, where + ".a"), bdf_at(p.b, where + ".b"), {p.read, p.write, p.atomics, p.nvlink}});
    }
    return out;
  } catch (const json::exception& e) {  // syntax; JSON_DIAGNOSTICS names the key path of anything else
    *reason = fmt::format("not valid JSON ({})", e.what());
  } catch (const InputError& e) {  // nesting deeper than kMaxJsonDepth, a number beyond double range
    *reason = e.what();
  } catch (const RecordingError& e) {
    *reason = e.what();
  }
  return std::nullopt;
}

std::string encode_nvml_recording(const NvmlTopology& data) {
  nvml_file::Recording recording;
  recording.driver_version = data.driver_version;
  for (const auto& g : data.gpus) {
    nvml_file::Device& d = recording.devices.emplace_back();
    d.pci_bus_id = g.bdf;
    d.name = g.name;
    d.uuid = g.uuid;
    d.memory_total_bytes = g.memory_total_bytes;
    d.bar1_total_bytes = g.bar1_total_bytes;
    d.cuda_compute_capability = g.compute_capability;
    if (g.virtualization_mode) d.virtualization_mode = report::to_string(*g.virtualization_mode);
    for (const auto& l : g.nvlinks) {
      nvml_file::NvLink& link = d.nvlinks.emplace_back(nvml_file::NvLink{l.link, l.active, l.version, l.remote_bdf});
      for (const auto& [name, kind] : kRemoteDeviceTypes)
        if (l.remote_kind == kind) link.remote_device_type = name;
    }
  }
  for (const auto& p : data.p2p)
    recording.p2p.push_back({p.a_bdf, p.b_bdf, p.status.read, p.status.write, p.status.atomics, p.status.nvlink});
  return json_text(json(recording));
}

}  // namespace interprobe
