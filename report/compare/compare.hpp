#pragma once
// `interprobe compare`: reports (or groups of repeated runs) side by side against a baseline, over
// the metrics view, with a verdict per metric that says whether a difference is real (outside the
// measurement noise the reports store) and material (at least `min_change` of the baseline).
//
// The test, per metric, baseline side A against side B (the first that applies):
//   runs      a side with >= 2 runs: each run's 95% interval (or its value) pooled into an
//             envelope per side; real when the envelopes do not overlap.
//   interval  both have a stored 95% interval of the median: real when they do not overlap.
//   cv        both have the samples' CV: real when |B - A| > k * sqrt(cv_A^2 + cv_B^2) * A (k = 2).
//   range     both have the samples' min..max: real when the ranges do not overlap.
//   borrowed  no spread of its own but a timed sibling at the same size (busbw next to time_us):
//             the sibling's relative interval/CV, then as above.
//   equal     read, not timed (topology, virtualization, system): `same` or `changed`.
//   not judged  probes/*/duration_s: how long interprobe ran (its budgets), shown as `same`.
//   threshold a derived number with no spread stored (fits, summaries, modeled steps): material
//             alone decides, and the row says so.
// A real and material difference is `better` or `worse` by the metric's direction (`changed`
// when it has none); anything else is `same`. `only_in_one`: present on one side only.
//
// Per series (one path over its sizes: a bandwidth sweep's gbps, an all-reduce's time_us), a sign
// test across sizes: `worse` when the sizes moved the same way with two-sided p < 0.01 and the
// median change is material, or when at least half its sizes are `worse` and none `better`. It
// catches a whole path slowed by less than the per-size noise. A path that would be `same` while
// some of its sizes are `worse` or `better` is `mixed` (the counts say how many); one whose sizes
// are all on one side only is `only_in_one`, never `same`.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/metrics.hpp"
#include "model/report.hpp"
#include "report/render/document.hpp"

namespace interprobe::compare {

// mixed: a path whose own verdict would be `same` while some of its sizes are worse or better.
enum class Verdict { worse, mixed, better, changed, only_in_one, same };
std::string to_string(Verdict v);

// One side of the comparison: a report, or repeated runs of one machine.
struct Side {
  std::string label;  // "a.json", "a1.json,a2.json"
  std::vector<report::Report> runs;
};

struct Options {
  double min_change_fraction = 0.05;  // smaller differences are `same` even when real
  double cv_k = 2.0;
  double sign_test_alpha = 0.01;
};

// One side's value of a metric.
struct SideValue {
  std::optional<double> value;                 // median over the side's runs; null: not in it
  std::optional<double> low, high;             // what the test compared (interval, envelope)
  std::optional<double> change_fraction;       // (value - baseline) / baseline
  Verdict verdict = Verdict::same;             // against the baseline (the baseline: same)
  std::string test;                            // runs, interval, cv, range, borrowed-..., equal, threshold
};

struct MetricComparison {
  std::string path;
  std::string section;
  std::string source;  // section and engine or backend, "collective/mpi": how one-sided rows are counted
  std::string unit;
  report::Better better = report::Better::neither;
  std::optional<std::string> series;  // the path with its size as "*", when it has one
  std::vector<SideValue> sides;       // in the order given; sides[baseline] is the baseline
};

struct SeriesSide {
  std::int64_t sizes = 0, sizes_worse = 0, sizes_better = 0;  // per-metric verdicts
  std::int64_t moved_worse = 0, moved_better = 0;             // sign of the change, material or not
  std::int64_t sizes_only_here = 0, sizes_only_in_baseline = 0;  // sizes one side lacks
  std::optional<double> median_change_fraction;               // signed: negative = worse
  double sign_test_p = 1;
  Verdict verdict = Verdict::same;
};

struct SeriesComparison {
  std::string series;
  std::vector<SeriesSide> sides;
};

struct SettingDiff {
  std::string name;
  std::vector<std::string> values;  // per side; "-" when absent; "a | b" when a group's runs disagree
};

struct Comparison {
  std::vector<std::string> labels;
  std::vector<std::int64_t> runs;
  std::size_t baseline = 0;
  Options options;
  std::vector<MetricComparison> metrics;  // ranked: worse, better, changed, only_in_one, same
  std::vector<SeriesComparison> series;   // ranked the same way
  std::vector<SettingDiff> settings;      // only those that differ
  std::int64_t settings_same = 0;
};

Comparison compare_sides(const std::vector<Side>& sides, std::size_t baseline, const Options& options = {});

// What compare's settings diff reads of one report: "virtualization/hypervisor" -> "kvm".
std::vector<std::pair<std::string, std::string>> settings_of(const report::Report& report);

// The worst verdict of a metric over the non-baseline sides (ranking and summaries).
Verdict worst_verdict(const MetricComparison& m, std::size_t baseline);
Verdict worst_verdict(const SeriesComparison& s, std::size_t baseline);

// Which side a one-sided metric or path is on, as its letter ("A" = the first report given).
std::string side_letter(std::size_t side);

// detail: every setting, path and metric; without it a short summary (what changed, by how much,
// how sure) that fits a screen, and a line saying what --detail adds.
render::Document comparison_document(const Comparison& c, bool detail = true);
nlohmann::json comparison_json(const Comparison& c);

}  // namespace interprobe::compare
