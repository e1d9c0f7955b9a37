// The recorded-NVML file format (see nvml_topology.hpp) and NVML enum names.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/json_text.hpp"
#include "common/text.hpp"
#include "probes/topology/nvlink_rate.hpp"
#include "probes/topology/nvml_topology.hpp"
#include "probes/topology/pci_inventory.hpp"

namespace interprobe {

namespace {

using json = nlohmann::json;

constexpr const char* kFormatName = "interprobe-nvml-topology";
constexpr int kFormatVersion = 1;


struct RecordingError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::optional<std::string> opt_string(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_string()) throw RecordingError(fmt::format("{}.{}: expected a string", where, key));
  return j[key].get<std::string>();
}

std::optional<std::int64_t> opt_integer(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_number_integer()) throw RecordingError(fmt::format("{}.{}: expected an integer", where, key));
  return j[key].get<std::int64_t>();
}

std::string req_bdf(const json& j, const char* key, const std::string& where) {
  auto text = opt_string(j, key, where);
  if (!text) throw RecordingError(fmt::format("{}.{}: missing", where, key));
  auto bdf = normalize_bus_id(*text);
  if (!bdf) throw RecordingError(fmt::format("{}.{}: '{}' is not a PCI address", where, key, text->substr(0, 40)));
  return *bdf;
}

std::optional<report::P2pCapability> opt_p2p(const json& j, const char* key, const std::string& where) {
  auto v = opt_string(j, key, where);
  if (!v) return std::nullopt;
  auto status = report::parse_enum<report::P2pCapability>(*v);
  if (!status) throw RecordingError(fmt::format("{}.{}: '{}' is no P2P status", where, key, v->substr(0, 40)));
  return status;
}

// A mode this interprobe does not know reads as `unknown` (a newer driver's recording).
std::optional<report::VirtualizationMode> opt_virtualization_mode(const json& j, const std::string& where) {
  auto v = opt_string(j, "virtualization_mode", where);
  if (!v) return std::nullopt;
  return report::parse_enum<report::VirtualizationMode>(*v).value_or(report::VirtualizationMode::unknown);
}

NvmlGpuRecord parse_gpu(const json& d, const std::string& where) {
  if (!d.is_object()) throw RecordingError(where + ": expected an object");
  NvmlGpuRecord gpu;
  gpu.bdf = req_bdf(d, "pci_bus_id", where);
  gpu.name = opt_string(d, "name", where);
  gpu.uuid = opt_string(d, "uuid", where);
  gpu.virtualization_mode = opt_virtualization_mode(d, where);
  gpu.memory_total_bytes = opt_integer(d, "memory_total_bytes", where);
  gpu.bar1_total_bytes = opt_integer(d, "bar1_total_bytes", where);
  gpu.compute_capability = opt_string(d, "cuda_compute_capability", where);
  if (gpu.compute_capability && !compute_capability_major(gpu.compute_capability))
    throw RecordingError(fmt::format("{}.cuda_compute_capability: '{}' is not MAJOR.MINOR (\"9.0\")", where,
                                     gpu.compute_capability->substr(0, 40)));
  if (d.contains("nvlinks")) {
    if (!d["nvlinks"].is_array()) throw RecordingError(where + ".nvlinks: expected an array");
    for (std::size_t i = 0; i < d["nvlinks"].size(); ++i) {
      const json& l = d["nvlinks"][i];
      std::string lw = fmt::format("{}.nvlinks[{}]", where, i);
      if (!l.is_object() || !l.contains("link") || !l["link"].is_number_integer())
        throw RecordingError(lw + ": expected an object with an integer 'link'");
      report::NvLinkInfo info;
      info.link = l["link"].get<int>();
      if (l.contains("active") && l["active"].is_boolean()) info.active = l["active"].get<bool>();
      if (l.contains("version") && l["version"].is_number_integer()) info.version = l["version"].get<int>();
      if (l.contains("remote_pci_bus_id") && !l["remote_pci_bus_id"].is_null()) info.remote_bdf = req_bdf(l, "remote_pci_bus_id", lw);
      auto text = opt_string(l, "remote_device_type", lw).value_or("unknown");
      auto kind = text == "ibmnpu" ? report::NvLinkRemoteKind::cpu : report::parse_enum<report::NvLinkRemoteKind>(text);
      if (!kind || text == "cpu")
        throw RecordingError(fmt::format("{}.remote_device_type: '{}' is not gpu, nvswitch, ibmnpu or unknown", lw, text.substr(0, 40)));
      info.remote_kind = *kind;
      gpu.nvlinks.push_back(std::move(info));
    }
  }
  return gpu;
}

}  // namespace

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
  try {
    json j = json::parse(text);
    if (!j.is_object()) throw RecordingError("expected a JSON object");
    if (j.value("format", std::string()) != kFormatName)
      throw RecordingError(fmt::format("'format' is not \"{}\"", kFormatName));
    if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kFormatVersion)
      throw RecordingError(fmt::format("'version' is not {}; re-record with this interprobe", kFormatVersion));
    NvmlTopology out;
    out.source = report::NvmlSource::recorded;
    out.driver_version = opt_string(j, "driver_version", "(top level)");
    if (!j.contains("devices") || !j["devices"].is_array()) throw RecordingError("'devices' must be an array");
    for (std::size_t i = 0; i < j["devices"].size(); ++i) out.gpus.push_back(parse_gpu(j["devices"][i], fmt::format("devices[{}]", i)));
    if (j.contains("p2p")) {
      if (!j["p2p"].is_array()) throw RecordingError("'p2p' must be an array");
      for (std::size_t i = 0; i < j["p2p"].size(); ++i) {
        const json& p = j["p2p"][i];
        std::string where = fmt::format("p2p[{}]", i);
        if (!p.is_object()) throw RecordingError(where + ": expected an object");
        NvmlP2pRecord rec;
        rec.a_bdf = req_bdf(p, "a", where);
        rec.b_bdf = req_bdf(p, "b", where);
        rec.status.read = opt_p2p(p, "read", where);
        rec.status.write = opt_p2p(p, "write", where);
        rec.status.atomics = opt_p2p(p, "atomics", where);
        rec.status.nvlink = opt_p2p(p, "nvlink", where);
        out.p2p.push_back(std::move(rec));
      }
    }
    return out;
  } catch (const json::exception& e) {
    *reason = fmt::format("not valid JSON ({})", e.what());
  } catch (const RecordingError& e) {
    *reason = e.what();
  }
  return std::nullopt;
}

std::string encode_nvml_recording(const NvmlTopology& data) {
  auto opt = [](const auto& v) -> json { return v ? json(*v) : json(nullptr); };
  auto opt_name = [](const auto& v) -> json { return v ? json(report::to_string(*v)) : json(nullptr); };
  json j = {{"format", kFormatName}, {"version", kFormatVersion}, {"driver_version", opt(data.driver_version)}};
  json devices = json::array();
  for (const auto& g : data.gpus) {
    json links = json::array();
    for (const auto& l : g.nvlinks) {
      links.push_back({{"link", l.link}, {"active", opt(l.active)}, {"version", opt(l.version)},
                       {"remote_pci_bus_id", opt(l.remote_bdf)}, {"remote_device_type", l.remote_kind == report::NvLinkRemoteKind::cpu ? "ibmnpu" : report::to_string(l.remote_kind)}});
    }
    devices.push_back({{"pci_bus_id", g.bdf}, {"name", opt(g.name)}, {"uuid", opt(g.uuid)},
                       {"memory_total_bytes", opt(g.memory_total_bytes)},
                       {"bar1_total_bytes", opt(g.bar1_total_bytes)}, {"cuda_compute_capability", opt(g.compute_capability)}, {"virtualization_mode", opt_name(g.virtualization_mode)},
                       {"nvlinks", links}});
  }
  j["devices"] = devices;
  json p2p = json::array();
  for (const auto& p : data.p2p)
    p2p.push_back({{"a", p.a_bdf}, {"b", p.b_bdf}, {"read", opt_name(p.status.read)}, {"write", opt_name(p.status.write)},
                   {"atomics", opt_name(p.status.atomics)}, {"nvlink", opt_name(p.status.nvlink)}});
  j["p2p"] = p2p;
  return json_text(j);
}

}  // namespace interprobe
