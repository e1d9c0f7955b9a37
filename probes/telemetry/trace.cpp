// Trace JSON: the three INTERPROBE_JSON lines below are the format (keys are the members of
// trace.hpp's structs). The reader is strict (unknown format/version, wrong kinds, negative values,
// fractions above 1 and samples of undeclared GPUs are InputErrors naming the key path), so a
// replayed verdict never rests on a half-understood file.
#include "probes/telemetry/trace.hpp"

#include <set>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/json_input.hpp"
#include "common/json_text.hpp"
#include "common/output_file.hpp"
#include "common/user_file.hpp"
#include "model/json_fields.hpp"
#include "model/schema_check.hpp"

namespace interprobe::telemetry {

INTERPROBE_JSON(TraceGpu, index, bdf, name, power_limit_w, sm_clock_max_mhz, memory_clock_max_mhz, pcie_capacity_gbps,
                nvlink_capacity_gbps, gpm_reason, unsupported)
INTERPROBE_JSON(TraceSample, t_s, gpu, utilization_fraction, power_w, energy_mj, sm_clock_mhz, memory_clock_mhz,
                clock_event_reasons, power_cap_violation_ns, thermal_violation_ns, pcie_tx_bytes, pcie_rx_bytes,
                nvlink_tx_bytes, nvlink_rx_bytes, sm_active_fraction, sm_occupancy_fraction, tensor_active_fraction,
                dram_active_fraction)
INTERPROBE_JSON(Trace, source, description, interval_s, gpus, samples)

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& label, const std::string& what) {
  throw InputError(fmt::format("{}: {}; give a trace written by `interprobe observe --record FILE`", label, what));
}

// A trace is mostly samples: an absent reading is left out rather than written as null (a null
// per unsupported field per sample would grow a trace by about a third).
void erase_nulls(json& j) {
  if (j.is_array())
    for (auto& element : j) erase_nulls(element);
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end();) {
    if (it->is_null()) it = j.erase(it);
    else erase_nulls(*it++);
  }
}

// Format and version first: a newer trace is refused for its version, not for a key it added.
void check_envelope(const json& j, const std::string& label) {
  if (!j.is_object()) fail(label, "(top level): not an object");
  auto format = j.find("format");
  if (format == j.end() || *format != kTraceFormat)
    fail(label, fmt::format("format: is {}, not \"{}\"", format == j.end() ? "missing" : json_excerpt(*format), kTraceFormat));
  auto version = j.find("version");
  if (version == j.end() || *version != kTraceVersion)
    fail(label, fmt::format("version: {} is not supported (this build reads version {})",
                            version == j.end() ? "missing" : json_excerpt(*version), kTraceVersion));
}

}  // namespace

json trace_schema() {
  json schema = report::schema_document<Trace>();
  schema["properties"]["format"] = {{"const", kTraceFormat}};
  schema["properties"]["version"] = {{"const", kTraceVersion}};
  // What a file must hold: the writer leaves absent readings out, and `source` defaults to "nvml".
  schema["required"] = {"format", "version", "interval_s", "gpus", "samples"};
  schema["$defs"]["trace_gpu"]["required"] = {"index"};
  schema["$defs"]["trace_sample"]["required"] = {"t_s", "gpu"};
  // Every number of a trace is a time, count, size, rate or fraction: none is negative; a
  // fraction may exceed 1 by a division's rounding, no more.
  for (json* object : {&schema, &schema["$defs"]["trace_gpu"], &schema["$defs"]["trace_sample"]})
    for (auto& [key, member] : (*object)["properties"].items()) {
      const std::string type = member.value("type", json()).dump();
      if (type.find("number") != std::string::npos || type.find("integer") != std::string::npos) member["minimum"] = 0;
      if (key.ends_with("_fraction")) member["maximum"] = 1.0 + 1e-9;
    }
  return schema;
}

Trace parse_trace(const std::string& text, const std::string& label) {
  json j;
  try {
    j = parse_json_bounded(text);
  } catch (const JsonInputError& e) {  // too deep, or a number beyond double range (1e999): names the key
    fail(label, fmt::format("not JSON ({})", e.what()));
  } catch (const json::exception& e) {  // syntax
    fail(label, fmt::format("not JSON ({})", e.what()));
  }
  check_envelope(j, label);
  static const json schema = trace_schema();
  if (auto violation = report::schema_violation(j, schema); !violation.empty()) fail(label, violation);
  Trace t;
  try {
    t = j.get<Trace>();
  } catch (const json::exception& e) {  // the schema check leaves none; JSON_DIAGNOSTICS names the key path
    fail(label, e.what());
  }
  // What no one key says.
  if (!(t.interval_s > 0)) fail(label, "interval_s: must be above 0");
  if (t.gpus.empty()) fail(label, "gpus: must be a non-empty list");
  std::set<std::int64_t> indexes;
  for (std::size_t i = 0; i < t.gpus.size(); ++i)
    if (!indexes.insert(t.gpus[i].index).second) fail(label, fmt::format("gpus[{}].index: repeats another GPU's index", i));
  for (std::size_t i = 0; i < t.samples.size(); ++i)
    if (!indexes.count(t.samples[i].gpu)) fail(label, fmt::format("samples[{}].gpu: {} is not in gpus", i, t.samples[i].gpu));
  return t;
}

Trace read_trace_file(const std::filesystem::path& path) {
  std::string label = "--replay " + path.string();
  std::string text = read_user_file(path, UserFile{label, "a telemetry trace", 256u << 20});
  return parse_trace(text, label);
}

std::string trace_to_json_text(const Trace& trace) {
  json j = trace;
  j["format"] = kTraceFormat;
  j["version"] = kTraceVersion;
  erase_nulls(j);
  return json_text(j, 1);
}

void write_trace_file(const std::filesystem::path& path, const Trace& trace) {
  write_output_file(path, trace_to_json_text(trace), "--record");
}

}  // namespace interprobe::telemetry
