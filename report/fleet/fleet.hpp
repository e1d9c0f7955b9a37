#pragma once
// The fleet report of `interprobe fleet`: one report per node (gathered over MPI by rank 0), and
// what only a fleet shows — a table of each node's headline metrics, the nodes that are outliers
// on a metric, the nodes whose settings differ from the majority, and the all-reduce across every
// rank. Pure analysis over report::Report; the MPI side lives in cli/fleet_ranks.cpp.
//
// Outliers: the modified z-score of Iglewicz and Hoaglin (1993),
//   z_i = 0.6745 * (x_i - median) / MAD,   MAD = median |x_j - median|,
// a node is an outlier on a metric when |z_i| > 3.5. When MAD = 0 (more than half the nodes
// share one value) the score uses the mean absolute deviation instead, as IBM's SPSS does:
//   z_i = (x_i - median) / (1.253314 * MeanAD);
// when that is 0 too every node has the same value and none is an outlier. A metric is scored
// only when at least kMinNodesForOutliers nodes have it: with two nodes |z| is at most 0.6745.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/metrics.hpp"
#include "model/report.hpp"
#include "report/render/document.hpp"

namespace interprobe::fleet {

inline constexpr const char* kFleetSchemaVersion = "1.0.0";
inline constexpr double kOutlierThreshold = 3.5;
inline constexpr double kMadConsistency = 0.6745;
inline constexpr double kMeanAdConsistency = 1.253314;
inline constexpr std::size_t kMinNodesForOutliers = 3;

// The JSON names of the fleet's enums (analysis.cpp) are their tables, as the report's are
// (model/vocabulary.hpp): the codec, the schema and the views read the same spelling.
enum class Scale { mad, mean_absolute_deviation, none };
std::span<const report::EnumName<Scale>> names(Scale);
using report::to_string;

// The modified z-score of each value (same order); all null when the values give no scale.
struct RobustScores {
  double median = 0;
  double mad = 0;
  double mean_absolute_deviation = 0;
  Scale scale = Scale::none;
  std::vector<std::optional<double>> z;
};
RobustScores robust_z_scores(const std::vector<double>& values);

enum class NodeStatus { ok, failed };
std::span<const report::EnumName<NodeStatus>> names(NodeStatus);

// A node's report inside the fleet file is that report's own JSON, written and read as
// `interprobe run -o` writes and `interprobe report` reads it (its schema check, its 1.x upgrade):
// its codec is the report's (fleet_json.cpp), not a declaration of the fleet's. Implicit from a
// Report, so that a node's report is assigned as one.
struct EmbeddedReport : report::Report {
  EmbeddedReport() = default;
  EmbeddedReport(report::Report r) : report::Report(std::move(r)) {}
};
// The fleet's all-reduce, as a report's collective section.
struct EmbeddedCollectiveSection : report::CollectiveSection {
  EmbeddedCollectiveSection() = default;
  EmbeddedCollectiveSection(report::CollectiveSection c) : report::CollectiveSection(std::move(c)) {}
};

struct FleetNode {
  std::string name;                 // host name, or "rank N" under --rank-as-node
  std::vector<std::int64_t> ranks;  // the MPI ranks on it; the first probed it
  NodeStatus status = NodeStatus::failed;
  std::optional<std::string> failure;  // why no report came from it
  std::optional<EmbeddedReport> report;
  bool ok() const { return status == NodeStatus::ok; }
};

struct NodeValue {
  std::string node;
  double value = 0;
  std::optional<double> z;
  bool outlier = false;
};

struct MetricOutliers {
  std::string path;
  std::string unit;
  report::Better better = report::Better::neither;
  double median = 0;
  double mad = 0;
  Scale scale = Scale::none;
  std::vector<NodeValue> values;  // every node with the metric, fleet order
  std::vector<std::string> outliers;
};

struct NodeSetting {
  std::string node;
  std::string value;  // "-": the node's report does not have the setting
};

struct SettingSpread {
  std::string name;                    // compare's settings name: "virtualization/machine_type"
  std::optional<std::string> majority; // the value more than half the nodes have; null: none does
  std::int64_t majority_nodes = 0;
  std::vector<NodeSetting> differing;
};

// The all-reduce across every rank of the fleet (not per node).
struct FleetCollective {
  std::int64_t ranks = 0;
  std::int64_t nodes = 0;  // as MPI counts them (processes sharing memory), not --rank-as-node's
  std::optional<EmbeddedCollectiveSection> section;  // null: not measured, `reason` says why
  std::optional<std::string> reason;
  std::vector<std::string> notes;  // the transport chosen, or why it is not known; NCCL's absence
};

struct FleetTiming {
  double per_node_probes_s = 0;  // the slowest node's probing (rank 0 waits for it)
  double gather_s = 0;           // reports to rank 0 over MPI
  double analysis_s = 0;         // outliers, heterogeneity, headline table
  double cross_node_allreduce_s = 0;
};

// How outliers are scored (see the top of this file), written into every fleet report so that a
// reader need not know this version's constants.
struct OutlierRule {
  std::string statistic = "modified z-score (Iglewicz-Hoaglin): 0.6745 * (x - median) / MAD";
  double threshold = kOutlierThreshold;
  std::size_t min_nodes = kMinNodesForOutliers;
  std::string mad_zero = "(x - median) / (1.253314 * mean absolute deviation); all values equal: no outlier";
};

// Each struct above is one INTERPROBE_JSON line in fleet_json.cpp: JSON keys are member names.
struct FleetReport {
  std::string fleet_schema_version = kFleetSchemaVersion;
  std::string tool_version;
  std::string started_at;
  std::int64_t ranks = 1;
  bool rank_as_node = false;  // testing: every rank counted as a node of its own
  OutlierRule outlier_rule;
  std::vector<FleetNode> nodes;
  std::vector<std::string> headline_paths;  // the metrics of the per-node table
  std::vector<MetricOutliers> outliers;     // every headline metric scored (outliers or not)
  std::vector<SettingSpread> heterogeneity; // only settings where some node differs
  FleetCollective collective;
  FleetTiming timing;
};

// Whether a metric path is one of the headline metrics of the per-node table and outlier scan:
// fitted bandwidth peaks and start-up times, P2P rates, all-reduce latency and peak busbw,
// compute peaks and memory bandwidth.
bool is_headline(const report::MetricRow& row);

// Fills headline_paths, outliers and heterogeneity from the nodes that have a report.
void analyze(FleetReport& fleet);

nlohmann::json fleet_to_json(const FleetReport& fleet);
// report/schema/fleet.schema.json: the schema the INTERPROBE_JSON declarations give, with
// fleet_json.cpp's overlay (patterns, bounds, descriptions) merged in.
nlohmann::json generated_fleet_schema();
// Throws InputError naming `label` and what is wrong.
FleetReport fleet_from_json(const nlohmann::json& j, const std::string& label);
// Whether a parsed JSON document is a fleet report (has "fleet_schema_version").
bool is_fleet_json(const nlohmann::json& j);
// A fleet file holds every node's report: at most this many bytes (what the gather can carry).
inline constexpr std::size_t kMaxFleetBytes = std::size_t{1} << 30;
// Whether `text` is a fleet report (its top-level object has "fleet_schema_version"), decided
// from the top level's keys in one pass that builds no tree and stops at the first of
// fleet_schema_version or schema_version: `check FILE` applies a report's size limit (64 MiB)
// before parsing a report, and the fleet's only to a fleet.
bool is_fleet_text(const std::string& text);
// The fleet report in `text`, or nullopt when the text is JSON of another kind (a report);
// InputError naming `label` for broken JSON, nesting past the report's bound or a bad fleet report.
std::optional<FleetReport> parse_fleet_text(const std::string& text, const std::string& label);

render::Document fleet_document(const FleetReport& fleet);

}  // namespace interprobe::fleet
