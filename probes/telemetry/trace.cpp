// Trace JSON: strict on read (unknown format/version, wrong types, non-finite or negative values
// and samples of undeclared GPUs are InputErrors naming the field), so a replayed verdict never
// rests on a half-understood file.
#include "probes/telemetry/trace.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/json_input.hpp"
#include "common/json_text.hpp"
#include "common/output_file.hpp"
#include "common/user_file.hpp"

namespace interprobe::telemetry {

namespace {

using nlohmann::json;

class Reader {
 public:
  explicit Reader(std::string label) : label_(std::move(label)) {}

  [[noreturn]] void fail(const std::string& at, const std::string& what) const {
    throw InputError(fmt::format("{}: {}: {}; give a trace written by `interprobe observe --record FILE`", label_, at, what));
  }
  const json& member(const json& o, const std::string& at, const char* key) const {
    if (!o.is_object()) fail(at, "not an object");
    auto it = o.find(key);
    if (it == o.end()) fail(at + "." + key, "missing");
    return *it;
  }
  double number(const json& v, const std::string& at, bool allow_negative = false) const {
    if (!v.is_number()) fail(at, "not a number");
    double d = v.get<double>();
    if (!std::isfinite(d) || (!allow_negative && d < 0)) fail(at, fmt::format("{} is out of range", json_excerpt(v)));
    return d;
  }
  std::int64_t integer(const json& v, const std::string& at) const {
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX)) fail(at, "not a whole number");
    std::int64_t i = v.get<std::int64_t>();
    if (i < 0) fail(at, "negative");
    return i;
  }
  template <class T>
  void optional(const json& o, const std::string& at, const char* key, std::optional<T>& out) const {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return;
    std::string path = at + "." + key;
    if constexpr (std::is_same_v<T, double>) out = number(*it, path);
    else if constexpr (std::is_same_v<T, std::int64_t>) out = integer(*it, path);
    else {
      if (!it->is_string()) fail(path, "not a string");
      out = it->get<std::string>();
    }
  }
  void fraction(const json& o, const std::string& at, const char* key, std::optional<double>& out) const {
    optional(o, at, key, out);
    if (out && *out > 1.0 + 1e-9) fail(at + "." + key, fmt::format("{} is above 1 (a fraction)", *out));
  }

 private:
  std::string label_;
};

TraceGpu read_gpu(const Reader& r, const json& g, const std::string& at) {
  TraceGpu out;
  out.index = r.integer(r.member(g, at, "index"), at + ".index");
  r.optional(g, at, "bdf", out.bdf);
  r.optional(g, at, "name", out.name);
  r.optional(g, at, "power_limit_w", out.power_limit_w);
  r.optional(g, at, "sm_clock_max_mhz", out.sm_clock_max_mhz);
  r.optional(g, at, "memory_clock_max_mhz", out.memory_clock_max_mhz);
  r.optional(g, at, "pcie_capacity_gbps", out.pcie_capacity_gbps);
  r.optional(g, at, "nvlink_capacity_gbps", out.nvlink_capacity_gbps);
  r.optional(g, at, "gpm_reason", out.gpm_reason);
  if (auto it = g.find("unsupported"); it != g.end() && !it->is_null()) {
    if (!it->is_array()) r.fail(at + ".unsupported", "not a list");
    for (const auto& u : *it) {
      if (!u.is_string()) r.fail(at + ".unsupported", "holds a non-string");
      out.unsupported.push_back(u.get<std::string>());
    }
  }
  return out;
}

TraceSample read_sample(const Reader& r, const json& s, const std::string& at) {
  TraceSample out;
  out.t_s = r.number(r.member(s, at, "t_s"), at + ".t_s");
  out.gpu = r.integer(r.member(s, at, "gpu"), at + ".gpu");
  r.fraction(s, at, "utilization_fraction", out.utilization_fraction);
  r.optional(s, at, "power_w", out.power_w);
  r.optional(s, at, "energy_mj", out.energy_mj);
  r.optional(s, at, "sm_clock_mhz", out.sm_clock_mhz);
  r.optional(s, at, "memory_clock_mhz", out.memory_clock_mhz);
  r.optional(s, at, "clock_event_reasons", out.clock_event_reasons);
  r.optional(s, at, "power_cap_violation_ns", out.power_cap_violation_ns);
  r.optional(s, at, "thermal_violation_ns", out.thermal_violation_ns);
  r.optional(s, at, "pcie_tx_bytes", out.pcie_tx_bytes);
  r.optional(s, at, "pcie_rx_bytes", out.pcie_rx_bytes);
  r.optional(s, at, "nvlink_tx_bytes", out.nvlink_tx_bytes);
  r.optional(s, at, "nvlink_rx_bytes", out.nvlink_rx_bytes);
  r.fraction(s, at, "sm_active_fraction", out.sm_active_fraction);
  r.fraction(s, at, "sm_occupancy_fraction", out.sm_occupancy_fraction);
  r.fraction(s, at, "tensor_active_fraction", out.tensor_active_fraction);
  r.fraction(s, at, "dram_active_fraction", out.dram_active_fraction);
  return out;
}

template <class T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

}  // namespace

Trace parse_trace(const std::string& text, const std::string& label) {
  json j;
  try {
    j = parse_json_bounded(text);
  } catch (const JsonInputError& e) {  // too deep, or a number beyond double range (1e999): names the key
    throw InputError(fmt::format("{}: not JSON ({}); give a trace written by `interprobe observe --record FILE`", label, e.what()));
  } catch (const json::exception& e) {  // syntax
    throw InputError(fmt::format("{}: not JSON ({}); give a trace written by `interprobe observe --record FILE`", label, e.what()));
  }
  Reader r(label);
  const json& format = r.member(j, "trace", "format");
  if (format != kTraceFormat) r.fail("format", fmt::format("is {}, not \"{}\"", json_excerpt(format), kTraceFormat));
  if (std::int64_t v = r.integer(r.member(j, "trace", "version"), "version"); v != kTraceVersion)
    r.fail("version", fmt::format("{} is not supported (this build reads version {})", v, kTraceVersion));
  Trace t;
  if (auto it = j.find("source"); it != j.end() && it->is_string()) t.source = it->get<std::string>();
  r.optional(j, "trace", "description", t.description);
  t.interval_s = r.number(r.member(j, "trace", "interval_s"), "interval_s");
  if (!(t.interval_s > 0)) r.fail("interval_s", "must be above 0");
  const json& gpus = r.member(j, "trace", "gpus");
  if (!gpus.is_array() || gpus.empty()) r.fail("gpus", "must be a non-empty list");
  std::set<std::int64_t> indexes;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    t.gpus.push_back(read_gpu(r, gpus[i], fmt::format("gpus[{}]", i)));
    if (!indexes.insert(t.gpus.back().index).second) r.fail(fmt::format("gpus[{}].index", i), "repeats another GPU's index");
  }
  const json& samples = r.member(j, "trace", "samples");
  if (!samples.is_array()) r.fail("samples", "not a list");
  for (std::size_t i = 0; i < samples.size(); ++i) {
    std::string at = fmt::format("samples[{}]", i);
    t.samples.push_back(read_sample(r, samples[i], at));
    if (!indexes.count(t.samples.back().gpu)) r.fail(at + ".gpu", fmt::format("{} is not in gpus", t.samples.back().gpu));
  }
  return t;
}

Trace read_trace_file(const std::filesystem::path& path) {
  std::string label = "--replay " + path.string();
  std::string text = read_user_file(path, UserFile{label, "a telemetry trace", 256u << 20});
  return parse_trace(text, label);
}

std::string trace_to_json_text(const Trace& t) {
  json j;
  j["format"] = kTraceFormat;
  j["version"] = kTraceVersion;
  j["source"] = t.source;
  put(j, "description", t.description);
  j["interval_s"] = t.interval_s;
  j["gpus"] = json::array();
  for (const auto& g : t.gpus) {
    json o{{"index", g.index}, {"unsupported", g.unsupported}};
    put(o, "bdf", g.bdf), put(o, "name", g.name), put(o, "power_limit_w", g.power_limit_w);
    put(o, "sm_clock_max_mhz", g.sm_clock_max_mhz), put(o, "memory_clock_max_mhz", g.memory_clock_max_mhz);
    put(o, "pcie_capacity_gbps", g.pcie_capacity_gbps), put(o, "nvlink_capacity_gbps", g.nvlink_capacity_gbps);
    put(o, "gpm_reason", g.gpm_reason);
    j["gpus"].push_back(std::move(o));
  }
  j["samples"] = json::array();
  for (const auto& s : t.samples) {
    json o{{"t_s", s.t_s}, {"gpu", s.gpu}};
    put(o, "utilization_fraction", s.utilization_fraction), put(o, "power_w", s.power_w), put(o, "energy_mj", s.energy_mj);
    put(o, "sm_clock_mhz", s.sm_clock_mhz), put(o, "memory_clock_mhz", s.memory_clock_mhz);
    put(o, "clock_event_reasons", s.clock_event_reasons);
    put(o, "power_cap_violation_ns", s.power_cap_violation_ns), put(o, "thermal_violation_ns", s.thermal_violation_ns);
    put(o, "pcie_tx_bytes", s.pcie_tx_bytes), put(o, "pcie_rx_bytes", s.pcie_rx_bytes);
    put(o, "nvlink_tx_bytes", s.nvlink_tx_bytes), put(o, "nvlink_rx_bytes", s.nvlink_rx_bytes);
    put(o, "sm_active_fraction", s.sm_active_fraction), put(o, "sm_occupancy_fraction", s.sm_occupancy_fraction);
    put(o, "tensor_active_fraction", s.tensor_active_fraction), put(o, "dram_active_fraction", s.dram_active_fraction);
    j["samples"].push_back(std::move(o));
  }
  return json_text(j, 1);
}

void write_trace_file(const std::filesystem::path& path, const Trace& trace) {
  write_output_file(path, trace_to_json_text(trace), "--record");
}

}  // namespace interprobe::telemetry
