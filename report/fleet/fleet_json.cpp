// The fleet report as JSON (report/schema/fleet.schema.json): each node's report exactly as
// `interprobe run -o` writes it, and the fleet's own analysis beside them.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/json_input.hpp"
#include "report/fleet/fleet.hpp"
#include "model/json.hpp"
#include "model/json_codec.hpp"
#include "model/schema_check.hpp"

namespace interprobe::fleet {

namespace {

using nlohmann::json;

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string better_text(report::Better b) {
  return b == report::Better::higher ? "higher" : b == report::Better::lower ? "lower" : "neither";
}

json node_json(const FleetNode& n) {
  // The same document `run -o` writes; invalid UTF-8 in it is replaced when the fleet is dumped.
  json report = n.report ? report::report_to_json(*n.report) : json(nullptr);
  return {{"name", n.name}, {"ranks", n.ranks}, {"status", n.ok ? "ok" : "failed"}, {"failure", or_null(n.failure)},
          {"report", std::move(report)}};
}

json outliers_json(const MetricOutliers& m) {
  json values = json::array();
  for (const auto& v : m.values)
    values.push_back({{"node", v.node}, {"value", v.value}, {"z", or_null(v.z)}, {"outlier", v.outlier}});
  return {{"path", m.path},   {"unit", m.unit},   {"better", better_text(m.better)}, {"median", m.median},
          {"mad", m.mad},     {"scale", to_string(m.scale)}, {"values", std::move(values)}, {"outliers", m.outliers}};
}

json setting_json(const SettingSpread& s) {
  json differing = json::array();
  for (const auto& [node, value] : s.differing) differing.push_back({{"node", node}, {"value", value}});
  return {{"name", s.name}, {"majority", or_null(s.majority)}, {"majority_nodes", s.majority_nodes},
          {"differing", std::move(differing)}};
}

json collective_json(const FleetCollective& c) {
  return {{"ranks", c.ranks},
          {"nodes", c.nodes},
          {"section", c.section ? report::collective_section_to_json(*c.section) : json(nullptr)},
          {"reason", or_null(c.reason)},
          {"notes", c.notes}};
}

report::Better better_of(const std::string& s) {
  return s == "higher" ? report::Better::higher : s == "lower" ? report::Better::lower : report::Better::neither;
}

Scale scale_of(const std::string& s) {
  return s == "mad" ? Scale::mad : s == "mean_absolute_deviation" ? Scale::mean_absolute_deviation : Scale::none;
}

template <class T>
std::optional<T> optional_at(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<T>();
}

FleetNode node_from_json(const json& j, const std::string& label, std::size_t index) {
  FleetNode n;
  n.name = j.at("name").get<std::string>();
  n.ranks = j.at("ranks").get<std::vector<std::int64_t>>();
  n.ok = j.at("status").get<std::string>() == "ok";
  n.failure = optional_at<std::string>(j, "failure");
  if (j.contains("report") && !j.at("report").is_null())
    n.report = report::parse_report_text(j.at("report").dump(), fmt::format("{} nodes[{}].report", label, index));
  return n;
}

MetricOutliers outliers_from_json(const json& j) {
  MetricOutliers m;
  m.path = j.at("path").get<std::string>();
  m.unit = j.at("unit").get<std::string>();
  m.better = better_of(j.at("better").get<std::string>());
  m.median = j.at("median").get<double>();
  m.mad = j.at("mad").get<double>();
  m.scale = scale_of(j.at("scale").get<std::string>());
  for (const auto& v : j.at("values"))
    m.values.push_back({v.at("node").get<std::string>(), v.at("value").get<double>(), optional_at<double>(v, "z"),
                        v.at("outlier").get<bool>()});
  m.outliers = j.at("outliers").get<std::vector<std::string>>();
  return m;
}

SettingSpread setting_from_json(const json& j) {
  SettingSpread s;
  s.name = j.at("name").get<std::string>();
  s.majority = optional_at<std::string>(j, "majority");
  s.majority_nodes = j.at("majority_nodes").get<std::int64_t>();
  for (const auto& d : j.at("differing")) s.differing.emplace_back(d.at("node").get<std::string>(), d.at("value").get<std::string>());
  return s;
}

}  // namespace

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

json fleet_to_json(const FleetReport& f) {
  json nodes = json::array(), outliers = json::array(), heterogeneity = json::array();
  for (const auto& n : f.nodes) nodes.push_back(node_json(n));
  for (const auto& m : f.outliers) outliers.push_back(outliers_json(m));
  for (const auto& s : f.heterogeneity) heterogeneity.push_back(setting_json(s));
  json rule = {{"statistic", "modified z-score (Iglewicz-Hoaglin): 0.6745 * (x - median) / MAD"},
               {"threshold", kOutlierThreshold},
               {"min_nodes", kMinNodesForOutliers},
               {"mad_zero", "(x - median) / (1.253314 * mean absolute deviation); all values equal: no outlier"}};
  const FleetTiming& t = f.timing;
  return {{"fleet_schema_version", f.schema_version},
          {"tool_version", f.tool_version},
          {"started_at", f.started_at},
          {"ranks", f.ranks},
          {"rank_as_node", f.rank_as_node},
          {"outlier_rule", std::move(rule)},
          {"nodes", std::move(nodes)},
          {"headline_paths", f.headline_paths},
          {"outliers", std::move(outliers)},
          {"heterogeneity", std::move(heterogeneity)},
          {"collective", collective_json(f.collective)},
          {"timing",
           {{"per_node_probes_s", t.per_node_probes_s},
            {"gather_s", t.gather_s},
            {"analysis_s", t.analysis_s},
            {"cross_node_allreduce_s", t.cross_node_allreduce_s}}}};
}

FleetReport fleet_from_json(const json& j, const std::string& label) {
  if (!is_fleet_json(j)) throw InputError(fmt::format("{}: not a fleet report (no fleet_schema_version)", label));
  try {
    FleetReport f;
    f.schema_version = j.at("fleet_schema_version").get<std::string>();
    if (f.schema_version.rfind("1.", 0) != 0)
      throw InputError(fmt::format("{}: fleet schema {} is not 1.x; use the interprobe that wrote it", label, f.schema_version));
    f.tool_version = j.at("tool_version").get<std::string>();
    f.started_at = j.at("started_at").get<std::string>();
    f.ranks = j.at("ranks").get<std::int64_t>();
    f.rank_as_node = j.at("rank_as_node").get<bool>();
    std::size_t i = 0;
    for (const auto& n : j.at("nodes")) f.nodes.push_back(node_from_json(n, label, i++));
    f.headline_paths = j.at("headline_paths").get<std::vector<std::string>>();
    for (const auto& m : j.at("outliers")) f.outliers.push_back(outliers_from_json(m));
    for (const auto& s : j.at("heterogeneity")) f.heterogeneity.push_back(setting_from_json(s));
    const json& c = j.at("collective");
    f.collective.ranks = c.at("ranks").get<std::int64_t>();
    f.collective.nodes = c.at("nodes").get<std::int64_t>();
    if (!c.at("section").is_null()) f.collective.section = report::collective_section_from_json(c.at("section"));
    f.collective.reason = optional_at<std::string>(c, "reason");
    f.collective.notes = c.at("notes").get<std::vector<std::string>>();
    const json& t = j.at("timing");
    f.timing = {t.at("per_node_probes_s").get<double>(), t.at("gather_s").get<double>(), t.at("analysis_s").get<double>(),
                t.at("cross_node_allreduce_s").get<double>()};
    return f;
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: not a valid fleet report: {}", label, e.what()));
  }
}

}  // namespace interprobe::fleet
