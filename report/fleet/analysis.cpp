// The fleet's analysis: robust z-scores per headline metric and the settings majority
// (fleet.hpp states the statistic and its threshold).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "report/compare/compare.hpp"
#include "report/fleet/fleet.hpp"

namespace interprobe::fleet {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool starts_with(const std::string& s, const std::string& head) { return s.rfind(head, 0) == 0; }

// Results, not settings: they are the outlier scan's business, not the majority's.
bool is_setting(const std::string& name) { return !starts_with(name, "findings/") && !starts_with(name, "bottlenecks/"); }

void add_heterogeneity(FleetReport& fleet) {
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> per_node;  // node -> settings
  std::vector<std::string> names;  // first-seen order over the nodes
  std::set<std::string> seen;
  for (const auto& node : fleet.nodes) {
    if (!node.report) continue;
    std::map<std::string, std::string> settings;
    for (auto& [name, value] : compare::settings_of(*node.report)) {
      if (!is_setting(name)) continue;
      if (seen.insert(name).second) names.push_back(name);
      settings[name] = value;
    }
    per_node.emplace_back(node.name, std::move(settings));
  }
  if (per_node.size() < 2) return;
  for (const auto& name : names) {
    std::map<std::string, std::int64_t> counts;
    auto value_of = [&](const std::map<std::string, std::string>& s) {
      auto it = s.find(name);
      return it == s.end() ? std::string("-") : it->second;
    };
    for (const auto& [node, settings] : per_node) ++counts[value_of(settings)];
    if (counts.size() == 1) continue;
    SettingSpread spread{name, std::nullopt, 0, {}};
    for (const auto& [value, n] : counts)
      if (2 * n > static_cast<std::int64_t>(per_node.size())) spread.majority = value, spread.majority_nodes = n;
    for (const auto& [node, settings] : per_node) {
      std::string value = value_of(settings);
      if (!spread.majority || value != *spread.majority) spread.differing.push_back({node, value});
    }
    fleet.heterogeneity.push_back(std::move(spread));
  }
}

void add_outliers(FleetReport& fleet) {
  struct Column {
    report::MetricRow row;  // the first node's, for unit and direction
    std::vector<std::pair<std::string, double>> values;
  };
  std::vector<std::string> order;
  std::map<std::string, Column> columns;
  for (const auto& node : fleet.nodes) {
    if (!node.report) continue;
    for (const auto& row : report::metrics_of(*node.report)) {
      if (!is_headline(row) || !std::isfinite(row.value)) continue;
      auto [it, added] = columns.try_emplace(row.path, Column{row, {}});
      if (added) order.push_back(row.path);
      it->second.values.emplace_back(node.name, row.value);
    }
  }
  fleet.headline_paths = order;
  for (const auto& path : order) {
    const Column& c = columns[path];
    MetricOutliers m{path, c.row.unit, c.row.better, 0, 0, Scale::none, {}, {}};
    std::vector<double> xs;
    for (const auto& [node, v] : c.values) xs.push_back(v);
    RobustScores scores = c.values.size() >= kMinNodesForOutliers ? robust_z_scores(xs) : RobustScores{};
    if (c.values.size() < kMinNodesForOutliers) scores.median = median_of(xs);
    m.median = scores.median;
    m.mad = scores.mad;
    m.scale = scores.scale;
    for (std::size_t i = 0; i < c.values.size(); ++i) {
      std::optional<double> z = i < scores.z.size() ? scores.z[i] : std::nullopt;
      bool outlier = z && std::fabs(*z) > kOutlierThreshold;
      m.values.push_back({c.values[i].first, c.values[i].second, z, outlier});
      if (outlier) m.outliers.push_back(c.values[i].first);
    }
    fleet.outliers.push_back(std::move(m));
  }
}

}  // namespace

std::span<const report::EnumName<Scale>> names(Scale) {
  static constexpr report::EnumName<Scale> table[] = {
      {Scale::mad, "mad"}, {Scale::mean_absolute_deviation, "mean_absolute_deviation"}, {Scale::none, "none"}};
  return table;
}

std::span<const report::EnumName<NodeStatus>> names(NodeStatus) {
  static constexpr report::EnumName<NodeStatus> table[] = {{NodeStatus::ok, "ok"}, {NodeStatus::failed, "failed"}};
  return table;
}

RobustScores robust_z_scores(const std::vector<double>& values) {
  RobustScores r;
  if (values.empty()) return r;
  r.median = median_of(values);
  std::vector<double> deviations;
  double sum = 0;
  for (double v : values) {
    deviations.push_back(std::fabs(v - r.median));
    sum += deviations.back();
  }
  r.mad = median_of(deviations);
  r.mean_absolute_deviation = sum / static_cast<double>(values.size());
  r.z.assign(values.size(), std::nullopt);
  if (r.mad > 0) r.scale = Scale::mad;
  else if (r.mean_absolute_deviation > 0) r.scale = Scale::mean_absolute_deviation;
  else return r;  // every value the same: no node stands out
  for (std::size_t i = 0; i < values.size(); ++i) {
    double d = values[i] - r.median;
    r.z[i] = r.scale == Scale::mad ? kMadConsistency * d / r.mad : d / (kMeanAdConsistency * r.mean_absolute_deviation);
  }
  return r;
}

bool is_headline(const report::MetricRow& row) {
  const std::string& f = row.family;
  const std::string& leaf = row.leaf;
  if (f == "p2p") return leaf == "p2p_gbps";
  if (f == "bandwidth_fit") return leaf == "peak_gbps" || leaf == "t0_us";
  if (f == "allreduce") return !row.bytes && (leaf == "latency_us" || leaf == "peak_busbw_gbps");
  return (f == "compute_peak" && leaf == "tflops") || (f == "compute_memory" && leaf == "gbps");
}

void analyze(FleetReport& fleet) {
  fleet.headline_paths.clear();
  fleet.outliers.clear();
  fleet.heterogeneity.clear();
  add_outliers(fleet);
  add_heterogeneity(fleet);
}

}  // namespace interprobe::fleet
