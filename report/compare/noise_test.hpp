#pragma once
// Whether two sides of a comparison differ by more than their noise: each side's runs of one
// metric, the intervals and spreads they carry, and the test that decides (compare.cpp ranks).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/compare/compare.hpp"
#include "model/metrics.hpp"

namespace interprobe::compare {

// One run's value of a metric and the spread the test may use (its own or a sibling's).
struct RunValue {
  double value = 0;
  std::optional<report::MetricSpread> spread;
  bool borrowed = false;
};

using RunRows = std::map<std::string, RunValue>;

// A side's value: the median over its runs, and the envelope of the runs' intervals.
struct SideSummary {
  std::optional<double> value;
  std::vector<RunValue> runs;
  bool borrowed = false;
};

struct Interval {
  double low, high;
};

struct TestResult {
  bool real = false;
  bool material_needed = true;
  std::string test;
  std::optional<Interval> a, b;
  bool band_around_baseline = false;  // `a` is a band drawn around the baseline's value (cv)
};

// Read from the machine (topology, virtualization, system), not timed: equal or changed, no noise.
bool read_not_timed(const std::string& section);

std::optional<Interval> interval_of(const RunValue& v);
// The runs' values and intervals of one side, low to high.
Interval envelope(const SideSummary& s);

// The test `o` allows for this metric: the runs' envelopes, the intervals of the medians with the
// noise rules beside them, a CV band, the min-max ranges, equality for read values, else a threshold.
TestResult run_test(const std::string& section, const SideSummary& a, const SideSummary& b, const Options& o);

// Same unless the test found a real difference of at least o.min_change_fraction; a read value
// that differs is `changed` (another machine), a timed one better or worse by the metric's direction.
Verdict verdict_for(const report::MetricRow& row, const TestResult& t, std::optional<double> change, const Options& o);

}  // namespace interprobe::compare
