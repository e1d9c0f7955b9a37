#include "report/compare/noise_test.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "model/sections.hpp"

namespace interprobe::compare {

using report::Better;
using report::MetricRow;
using report::MetricSpread;

bool read_not_timed(const std::string& section) {
  for (const auto& s : report::kSections)
    if (s.read_not_timed && s.name == section) return true;
  return false;
}

std::optional<Interval> interval_of(const RunValue& v) {
  if (v.spread && v.spread->interval_low && v.spread->interval_high) return Interval{*v.spread->interval_low, *v.spread->interval_high};
  return std::nullopt;
}

Interval envelope(const SideSummary& s) {
  Interval e{s.runs.front().value, s.runs.front().value};
  for (const auto& r : s.runs) {
    Interval i = interval_of(r).value_or(Interval{r.value, r.value});
    e.low = std::min({e.low, i.low, r.value});
    e.high = std::max({e.high, i.high, r.value});
  }
  return e;
}

namespace {

bool overlap(Interval a, Interval b) { return a.low <= b.high && b.low <= a.high; }
bool inside(double v, std::optional<double> low, std::optional<double> high) { return low && high && *low <= v && v <= *high; }


// One run's value within what a host copy loop resolves of the other's (a few CPU cycles a copy).
bool within_resolution(const RunValue& a, const RunValue& b) {
  return (a.spread && inside(b.value, a.spread->resolution_low, a.spread->resolution_high)) ||
         (b.spread && inside(a.value, b.spread->resolution_low, b.spread->resolution_high));
}

// Some run of one side within the other's resolution: more runs narrow the noise of the medians,
// not the loop's few cycles a copy.
bool within_resolution(const SideSummary& a, const SideSummary& b) {
  for (const auto& ra : a.runs)
    for (const auto& rb : b.runs)
      if (within_resolution(ra, rb)) return true;
  return false;
}

// Noise as the runs themselves saw it, beside the intervals of the medians (which say how well
// each run knows its own median, not how much a second run moves it): a difference within either
// run's sample CV (nvbench's compare rule), or one run's value inside the range most of the other's
// samples fell in (a size with two modes that both runs saw, whose median flips between them), or
// a difference below what the measurement resolves (host copies: a few CPU cycles a copy, which a
// copy loop moves between runs), or overlapping ranges of the runs' pass medians (each pass a rerun
// in miniature: another moment, its own buffers, so its own physical pages and cache-set
// conflicts). Returns the first rule that holds, named as the `test` column shows it.
std::optional<std::string_view> sample_noise_rule(const RunValue& a, const RunValue& b) {
  const MetricSpread& sa = *a.spread;
  const MetricSpread& sb = *b.spread;
  if (sa.cv_fraction && sb.cv_fraction && a.value != 0 &&
      std::abs(b.value - a.value) <= std::max(*sa.cv_fraction, *sb.cv_fraction) * std::abs(a.value))
    return "cv";
  if (inside(b.value, sa.typical_low, sa.typical_high) || inside(a.value, sb.typical_low, sb.typical_high)) return "modes";
  if (within_resolution(a, b)) return "resolution";
  if (sa.passes_low && sa.passes_high && sb.passes_low && sb.passes_high &&
      overlap(Interval{*sa.passes_low, *sa.passes_high}, Interval{*sb.passes_low, *sb.passes_high}))
    return "passes";
  return std::nullopt;
}

}  // namespace

TestResult run_test(const std::string& section, const SideSummary& a, const SideSummary& b, const Options& o) {
  std::string prefix = a.borrowed || b.borrowed ? "borrowed-" : "";
  if (a.runs.size() >= 2 || b.runs.size() >= 2) {
    Interval ea = envelope(a), eb = envelope(b);
    if (!overlap(ea, eb) && within_resolution(a, b)) return {false, true, "runs/resolution", ea, eb};
    return {!overlap(ea, eb), true, "runs", ea, eb};
  }
  const RunValue& ra = a.runs.front();
  const RunValue& rb = b.runs.front();
  if (auto ia = interval_of(ra), ib = interval_of(rb); ia && ib) {
    if (overlap(*ia, *ib)) return {false, true, prefix + "interval", ia, ib};
    // Intervals apart, yet within what a rerun moves: the label says which noise rule decided.
    if (auto rule = sample_noise_rule(ra, rb)) return {false, true, prefix + "interval/" + std::string(*rule), ia, ib};
    return {true, true, prefix + "interval", ia, ib};
  }
  if (ra.spread && rb.spread && ra.spread->cv_fraction && rb.spread->cv_fraction && ra.value != 0) {
    double band = o.cv_k * std::hypot(*ra.spread->cv_fraction, *rb.spread->cv_fraction) * std::abs(ra.value);
    Interval around_baseline{ra.value - band, ra.value + band};
    bool outside = std::abs(rb.value - ra.value) > band;
    if (outside && within_resolution(a, b)) return {false, true, prefix + "cv/resolution", around_baseline, std::nullopt, true};
    return {outside, true, prefix + "cv", around_baseline, std::nullopt, true};
  }
  if (ra.spread && rb.spread && ra.spread->min && ra.spread->max && rb.spread->min && rb.spread->max) {
    Interval ia{*ra.spread->min, *ra.spread->max}, ib{*rb.spread->min, *rb.spread->max};
    return {!overlap(ia, ib), true, prefix + "range", ia, ib};
  }
  if (!ra.spread && !rb.spread && read_not_timed(section)) return {ra.value != rb.value, false, "equal", {}, {}};
  return {true, true, "threshold", {}, {}};
}

Verdict verdict_for(const MetricRow& row, const TestResult& t, std::optional<double> change, const Options& o) {
  if (!t.real) return Verdict::same;
  if (t.material_needed && change && std::abs(*change) < o.min_change_fraction) return Verdict::same;
  // A read value (link speed, memory size) differing is a different machine, not a slower run.
  if (!t.material_needed || row.better == Better::neither || !change) return Verdict::changed;
  bool up = *change > 0;
  return up == (row.better == Better::higher) ? Verdict::better : Verdict::worse;
}

}  // namespace interprobe::compare
