// The report's JSON Schema (report/schema/report.schema.json is this, written out): generated from
// the INTERPROBE_JSON declarations in json_codecs.cpp, then annotated below with what a C++ type
// cannot say. The annotations are a JSON merge patch (RFC 7386) per $defs entry ("" is the
// document): patterns and constants, the closed lists a member keeps as text, and "x-since": a
// member a later 2.x minor version added, which older reports lack (taken out of "required").
// The finding ids come from the section table (model/sections.hpp).
#include <algorithm>
#include <array>
#include <string>

#include "model/json_codec.hpp"
#include "model/schema_check.hpp"
#include "model/sections.hpp"

namespace interprobe::report {

namespace {

constexpr const char* kAnnotations = R"json(
{
  "": {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://interprobe.dev/schema/report-2.json",
    "title": "interprobe report",
    "description":
      "Every report interprobe writes validates against this schema. Units are in key names; missing values are null.",
    "required": ["schema_version", "tool", "host", "probes", "findings"],
    "properties": {"schema_version": {"pattern": "^2\\.[0-9]+\\.[0-9]+$"}},
    "$defs": {"finding_id": {
      "description": "Every finding id this version writes (README: Findings). Readers accept ids they do not know.",
      "type": "string",
      "pattern": "^[a-z0-9_.-]+$",
      "x-open-on-read": true}}},
  "bandwidth_engine_status": {"properties": {"cycle_ns": {"x-since": "2.5.0"}}},
  "bandwidth_sweep": {"properties": {"directions": {"enum": [1, 2]}}},
  "bandwidth_point": {"properties": {"telemetry": {"x-since": "2.3.0"}, "visit_medians_us": {"x-since": "2.4.0"},
    "bytes": {"minimum": 1}, "samples": {"minimum": 1}, "copies_per_sample": {"minimum": 1}}},
  "workload_estimate": {"properties": {"layouts": {"x-since": "2.6.0"}, "observed": {"x-since": "2.3.0"},
    "weight_dtype": {"enum": ["bf16", "fp8", "nvfp4"]}, "tp": {"minimum": 1}}},
  "layout_collective": {"properties": {"collective": {"enum": ["all_reduce", "alltoall"]}, "ranks": {"minimum": 1}}},
  "layout_option": {"properties": {"limited_by": {"enum": ["memory reads", "communication", "does not fit", "not priced"]},
    "attention_tp": {"minimum": 1}, "attention_dp": {"minimum": 1}, "expert_tp": {"minimum": 1},
    "expert_ep": {"minimum": 1}, "batch": {"minimum": 1}}},
  "allreduce_sweep": {"properties": {"collective": {"x-since": "2.6.0"}, "op": {"enum": ["sum", "none"]}}},
  "allreduce_point": {"properties": {"telemetry": {"x-since": "2.3.0"}, "bytes": {"minimum": 1},
    "elements_per_rank": {"minimum": 1}}},
  "collective_section": {"properties": {"sweeps": {"x-since": "2.6.0"}}},
  "dtype_support": {"properties": {"weight_only": {"x-since": "2.4.0"}}},
  "compute_engine_result": {"properties": {"launch_floor_graph_us": {"x-since": "2.3.0"}}},
  "compute_peak": {"properties": {"telemetry": {"x-since": "2.3.0"}, "size": {"minimum": 1}}},
  "gemm_point": {"properties": {"telemetry": {"x-since": "2.3.0"}, "m": {"minimum": 1}, "n": {"minimum": 1},
    "k": {"minimum": 1}, "weight_bytes": {"minimum": 1}}},
  "finding": {"properties": {"id": {"type": null, "$ref": "#/$defs/finding_id"}}},
  "host_info": {"properties": {"started_at": {"pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"}}},
  "tool_info": {"properties": {"name": {"const": "interprobe"}}},
  "topology_section": {"properties": {"gpu_index_order": {"const": "pci_bus_id"}}},
  "gpu_pair": {"properties": {"path": {"pattern": "^(NV[0-9]+|X|PIX|PXB|PHB|NODE|SYS|unknown)$"}}},
  "gpu": {"properties": {"compute_capability": {"pattern": "^[0-9]{1,2}\\.[0-9]{1,2}$"},
    "nic_paths": {"x-since": "2.2.0"}}},
  "pci_device": {"properties": {"bdf": {"pattern": "^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]$"},
    "class_id": {"pattern": "^[0-9a-f]{6}$"}, "device_id": {"pattern": "^[0-9a-f]{4}$"},
    "network_name": {"x-since": "2.2.0"}, "vendor_id": {"pattern": "^[0-9a-f]{4}$"}}},
  "compute_timing": {"properties": {"samples": {"minimum": 1}, "ops_per_sample": {"minimum": 1}}},
  "memory_ceiling": {"properties": {"bytes": {"minimum": 1}}},
  "what_if": {"properties": {"batch": {"minimum": 1}}},
  "batch_estimate": {"properties": {"batch": {"minimum": 1}}},
  "bandwidth_section": {"properties": {"passes": {"minimum": 1}}},
  "bandwidth_buffer": {"properties": {"bytes": {"minimum": 1}}},
  "bandwidth_fit": {"properties": {"points_used": {"minimum": 2}}}
}
)json";

// Every number in a report is a size, a count, a time or a rate, so none is negative; these are
// differences.
constexpr std::array<std::string_view, 2> kSignedMembers = {"residual_us", "gain_fraction"};

bool is_numeric(const json& schema) {
  auto type = schema.find("type");
  if (type == schema.end()) return false;
  for (const auto& t : type->is_array() ? *type : json::array({*type}))
    if (t == "number" || t == "integer") return true;
  return false;
}

void non_negative(json& schema) {
  if (is_numeric(schema) && !schema.contains("minimum")) schema["minimum"] = 0;
  if (auto items = schema.find("items"); items != schema.end()) non_negative(*items);
}

void finish_object(json& object) {
  if (!object.contains("properties")) return;
  auto& required = object["required"];
  for (auto& [key, member] : object["properties"].items()) {
    if (std::find(kSignedMembers.begin(), kSignedMembers.end(), key) == kSignedMembers.end()) non_negative(member);
    if (member.contains("x-since")) required.erase(std::remove(required.begin(), required.end(), key), required.end());
  }
}

// The committed file is read by people: a value that fits in the line stays on it.
std::string one_line(const json& value) {
  if (!value.is_structured()) return value.dump();
  std::string out;
  for (auto it = value.begin(); it != value.end(); ++it)
    out += (out.empty() ? "" : ", ") + (value.is_object() ? json(it.key()).dump() + ": " : "") + one_line(*it);
  return value.is_object() ? "{" + out + "}" : "[" + out + "]";
}

void write_readable(std::string& out, const json& value, std::size_t indent) {
  constexpr std::size_t kWidth = 120;
  if (std::string line = one_line(value); !value.is_structured() || indent + line.size() <= kWidth - 12) {
    out += line;
    return;
  }
  const std::string pad(indent + 2, ' ');
  out += value.is_object() ? "{\n" : "[\n";
  for (auto it = value.begin(); it != value.end(); ++it) {
    out += pad + (value.is_object() ? json(it.key()).dump() + ": " : "");
    write_readable(out, *it, indent + 2);
    out += std::next(it) != value.end() ? ",\n" : "\n";
  }
  out += std::string(indent, ' ') + (value.is_object() ? "}" : "]");
}

}  // namespace

json report_schema() {
  json schema = generated_report_schema();
  const json annotations = json::parse(kAnnotations);
  for (const auto& [name, patch] : annotations.items()) {
    // at(): an annotation of a struct that was renamed fails the schema test, not silently.
    (name.empty() ? schema : schema.at("$defs").at(name)).merge_patch(patch);
  }
  json ids = json::array();
  for (const auto& section : kSections)
    for (std::string_view id : section.finding_ids) ids.push_back(std::string(id));
  std::sort(ids.begin(), ids.end());
  schema["$defs"]["finding_id"]["enum"] = std::move(ids);
  finish_object(schema);
  for (auto& [name, def] : schema["$defs"].items()) finish_object(def);
  return schema;
}

const char* report_schema_text() {
  static const std::string text = [] {
    std::string out;
    write_readable(out, report_schema(), 0);
    return out + "\n";
  }();
  return text.c_str();
}

}  // namespace interprobe::report
