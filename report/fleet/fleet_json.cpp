// The fleet report as JSON: one INTERPROBE_JSON line per struct (keys are member names; the
// codec and the schema come from it), each node's report exactly as `interprobe run -o` writes it,
// and report/schema/fleet.schema.json generated from the declarations plus a small overlay.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/json_input.hpp"
#include "report/fleet/fleet.hpp"
#include "model/json.hpp"
#include "model/schema_check.hpp"
#include "model/json_codec.hpp"

namespace interprobe::fleet {

using nlohmann::json;
// The fleet's enums are named through their tables, as the report's are.
using report::from_json;
using report::to_json;

// --- the parts that are a report's own JSON
void to_json(json& j, const EmbeddedReport& r) { j = report::report_to_json(r); }
void from_json(const json& j, EmbeddedReport& r) {
  // The report reader's own checks and upgrade; its error keeps the key path of the node.
  try {
    r = report::parse_report_text(j.dump(), "the node's report");
  } catch (const InputError& e) {
    throw json::other_error::create(501, e.what(), &j);
  }
}
json json_schema(report::SchemaDefs&, const EmbeddedReport*) {
  return {{"type", "object"}, {"description", "the node's report, as report.schema.json describes it; null when it failed"}};
}

void to_json(json& j, const EmbeddedCollectiveSection& c) { j = report::collective_section_to_json(c); }
void from_json(const json& j, EmbeddedCollectiveSection& c) { c = report::collective_section_from_json(j); }
json json_schema(report::SchemaDefs&, const EmbeddedCollectiveSection*) {
  return {{"type", "object"}, {"description", "the collective section of report.schema.json"}};
}

INTERPROBE_JSON(FleetNode, name, ranks, status, failure, report)
INTERPROBE_JSON(NodeValue, node, value, z, outlier)
INTERPROBE_JSON(MetricOutliers, path, unit, better, median, mad, scale, values, outliers)
INTERPROBE_JSON(NodeSetting, node, value)
INTERPROBE_JSON(SettingSpread, name, majority, majority_nodes, differing)
INTERPROBE_JSON(FleetCollective, ranks, nodes, section, reason, notes)
INTERPROBE_JSON(FleetTiming, per_node_probes_s, gather_s, analysis_s, cross_node_allreduce_s)
INTERPROBE_JSON(OutlierRule, statistic, threshold, min_nodes, mad_zero)
INTERPROBE_JSON(FleetReport, fleet_schema_version, tool_version, started_at, ranks, rank_as_node, outlier_rule, nodes,
                headline_paths, outliers, heterogeneity, collective, timing)

namespace {

// What the member types cannot say, as a JSON merge patch (RFC 7386) over the generated schema.
constexpr const char* kFleetSchemaOverlay = R"json({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://interprobe.dev/schema/fleet-1.json",
  "title": "interprobe fleet report",
  "description": "What `interprobe fleet -o FILE` writes: each node's report (valid against report.schema.json) and the fleet's analysis. Outliers: modified z-score 0.6745*(x-median)/MAD, |z| > threshold; MAD = 0: (x-median)/(1.253314*MeanAD).",
  "properties": {
    "fleet_schema_version": {"pattern": "^1\\.[0-9]+\\.[0-9]+$"},
    "ranks": {"minimum": 1},
    "rank_as_node": {"description": "testing: every rank counted as a node of its own"}
  },
  "$defs": {
    "outlier_rule": {"properties": {"threshold": {"exclusiveMinimum": 0}, "min_nodes": {"minimum": 1}}},
    "fleet_node": {"properties": {"ranks": {"minItems": 1, "items": {"minimum": 0}}}},
    "metric_outliers": {"properties": {"mad": {"minimum": 0}}},
    "setting_spread": {"properties": {"majority_nodes": {"minimum": 0}}},
    "node_setting": {"properties": {"value": {"description": "\"-\": the node's report does not have the setting"}}},
    "fleet_collective": {"properties": {"ranks": {"minimum": 1}, "nodes": {"minimum": 1}}},
    "fleet_timing": {"properties": {"per_node_probes_s": {"minimum": 0}, "gather_s": {"minimum": 0},
                                    "analysis_s": {"minimum": 0}, "cross_node_allreduce_s": {"minimum": 0}}}
  }
})json";

}  // namespace

json generated_fleet_schema() {
  json schema = report::schema_document<FleetReport>();
  schema.merge_patch(json::parse(kFleetSchemaOverlay));
  return schema;
}

bool is_fleet_json(const json& j) { return j.is_object() && j.contains("fleet_schema_version"); }

namespace {

// Reads the top level's keys only; stopping early is returning false.
class TopLevelKeys : public nlohmann::json_sax<json> {
 public:
  bool fleet = false;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return ++depth_, true; }
  bool start_array(std::size_t) override { return depth_ > 0 && (++depth_, true); }  // a top-level array: no fleet
  bool end_object() override { return --depth_, true; }
  bool end_array() override { return --depth_, true; }
  bool key(string_t& key) override {
    if (depth_ != 1) return true;
    fleet = key == "fleet_schema_version";
    return !fleet && key != "schema_version";
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  long depth_ = 0;
};

}  // namespace

bool is_fleet_text(const std::string& text) {
  TopLevelKeys keys;
  json::sax_parse(text, &keys);
  return keys.fleet;
}

std::optional<FleetReport> parse_fleet_text(const std::string& text, const std::string& label) {
  json j;
  try {
    j = parse_json_bounded(text);
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", label, e.what()));
  } catch (const JsonInputError& e) {  // too deep, a number out of range: names the key
    throw InputError(fmt::format("{}: {}", label, e.what()));
  }
  if (!is_fleet_json(j)) return std::nullopt;
  return fleet_from_json(j, label);
}

json fleet_to_json(const FleetReport& f) { return f; }

FleetReport fleet_from_json(const json& j, const std::string& label) {
  if (!is_fleet_json(j)) throw InputError(fmt::format("{}: not a fleet report (no fleet_schema_version)", label));
  try {
    const auto version = j.at("fleet_schema_version").get<std::string>();
    if (version.rfind("1.", 0) != 0)
      throw InputError(fmt::format("{}: fleet schema {} is not 1.x; use the interprobe that wrote it", label, version));
    // INTERPROBE_JSON's decoder keeps a member's default for a missing key, and a fleet file
    // without one is broken (1.0 is the only version): the schema is checked first.
    static const json schema = generated_fleet_schema();
    if (auto violation = report::schema_violation(j, schema); !violation.empty())
      throw InputError(fmt::format("{}: not a valid fleet report: {}", label, violation));
    return j.get<FleetReport>();
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: not a valid fleet report: {}", label, e.what()));
  }
}

}  // namespace interprobe::fleet
