// report/compare on reports built here: what the noise test calls same, worse and better, how
// groups of runs and read values are judged, the ranking, and the settings diff on fixtures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "report/compare/compare.hpp"
#include "model/json.hpp"
#include "model/metrics.hpp"
#include "report/render/renderers.hpp"

namespace {

using namespace interprobe;
using compare::Verdict;

// A point whose median time has a 95% interval of +-rel and samples with CV `cv`.
report::BandwidthPoint point(std::int64_t bytes, double median_us, double rel, double cv) {
  report::BandwidthPoint p;
  p.bytes = bytes;
  p.samples = 30;
  p.median_us = median_us;
  p.min_us = median_us * (1 - 2 * rel);
  p.max_us = median_us * (1 + 2 * rel);
  p.p95_us = median_us * (1 + rel);
  p.cv_fraction = cv;
  p.median_ci_low_us = median_us * (1 - rel);
  p.median_ci_high_us = median_us * (1 + rel);
  p.gbps = static_cast<double>(bytes) / (median_us * 1e3);
  return p;
}

report::BandwidthSweep sweep(report::CopyKind kind, int sizes, double rel, double cv) {
  report::BandwidthSweep s;
  s.kind = kind;
  s.src = s.dst = "node0";
  s.memory_kind = report::MemoryKind::pageable;
  for (int i = 0; i < sizes; ++i) {
    std::int64_t bytes = std::int64_t{4096} << (2 * i);
    s.points.push_back(point(bytes, 0.5 + static_cast<double>(bytes) / 8e3, rel, cv));
  }
  return s;
}

report::Report bandwidth_report(int sizes, double rel, double cv) {
  report::Report r;
  r.bandwidth.emplace();
  r.bandwidth->sweeps = {sweep(report::CopyKind::memcpy, sizes, rel, cv), sweep(report::CopyKind::staged, sizes, rel, cv)};
  return r;
}

// Every time of one sweep divided by `factor`, every rate multiplied: that path is slower by it.
void scale_sweep(report::Report& r, std::size_t index, double factor) {
  for (auto& p : r.bandwidth->sweeps[index].points) {
    for (double* t : {&p.min_us, &p.median_us, &p.p95_us, &p.max_us}) *t /= factor;
    *p.median_ci_low_us /= factor;
    *p.median_ci_high_us /= factor;
    p.gbps *= factor;
  }
}

compare::Comparison pair(report::Report a, report::Report b, compare::Options o = {}) {
  return compare::compare_sides({{"a.json", {std::move(a)}}, {"b.json", {std::move(b)}}}, 0, o);
}

const compare::MetricComparison& metric(const compare::Comparison& c, const std::string& path) {
  auto it = std::find_if(c.metrics.begin(), c.metrics.end(), [&](const auto& m) { return m.path == path; });
  if (it == c.metrics.end()) throw std::runtime_error("no metric " + path);
  return *it;
}

const std::string kStagedRate = "bandwidth/host/staged/node0->node0/pageable/*/gbps";

TEST(Compare, QuietPathScaledByNineTenthsIsWorseAtEverySizeAndRankedFirst) {
  report::Report a = bandwidth_report(6, 0.01, 0.01);
  report::Report b = a;
  scale_sweep(b, 1, 0.9);
  auto c = pair(a, b);
  for (const auto& m : c.metrics) {
    bool staged = m.path.find("/staged/") != std::string::npos && m.path.find("/fit/") == std::string::npos;
    EXPECT_EQ(m.sides[1].verdict, staged ? Verdict::worse : Verdict::same) << m.path << " " << m.sides[1].test;
  }
  ASSERT_FALSE(c.metrics.empty());
  EXPECT_NE(c.metrics.front().path.find("/staged/"), std::string::npos) << c.metrics.front().path;
  // The time rows lost 1/0.9 - 1 = 11.1%, the rates 10%: the larger loss comes first.
  EXPECT_TRUE(c.metrics.front().path.ends_with("time_us")) << c.metrics.front().path;
  EXPECT_NEAR(*metric(c, "bandwidth/host/staged/node0->node0/pageable/4KiB/gbps").sides[1].change_fraction, -0.1, 1e-9);
  ASSERT_FALSE(c.series.empty());
  EXPECT_NE(c.series.front().series.find("/staged/"), std::string::npos);
  EXPECT_EQ(c.series.front().sides[1].verdict, Verdict::worse);
}

TEST(Compare, NoisyPathScaledIsSamePerSizeButTheSignTestFlagsThePath) {
  report::Report a = bandwidth_report(10, 0.3, 0.3);
  report::Report b = a;
  scale_sweep(b, 1, 0.9);
  auto c = pair(a, b);
  for (const auto& m : c.metrics) {
    if (m.path.find("/fit/") == std::string::npos) {
      EXPECT_EQ(m.sides[1].verdict, Verdict::same) << m.path;
    }
  }
  auto it = std::find_if(c.series.begin(), c.series.end(), [](const auto& s) { return s.series == kStagedRate; });
  ASSERT_NE(it, c.series.end());
  EXPECT_EQ(it->sides[1].verdict, Verdict::worse);
  EXPECT_EQ(it->sides[1].moved_worse, 10);
  EXPECT_LT(it->sides[1].sign_test_p, 0.01);
  EXPECT_NEAR(*it->sides[1].median_change_fraction, -0.1, 1e-9);
  EXPECT_EQ(c.series.front().sides[1].verdict, Verdict::worse);
  // Too few sizes for the sign test to reach p < 0.01 (7: p = 2/128): the path stays same.
  report::Report a7 = bandwidth_report(7, 0.3, 0.3), b7 = a7;
  scale_sweep(b7, 1, 0.9);
  for (const auto& s : pair(a7, b7).series) EXPECT_EQ(s.sides[1].verdict, Verdict::same) << s.series;
}

TEST(Compare, RealButSmallDifferenceIsSameUnlessMinChangeIsLowered) {
  report::Report a = bandwidth_report(4, 0.005, 0.005);
  report::Report b = a;
  scale_sweep(b, 0, 0.97);  // 3% slower, intervals +-0.5%: outside the noise
  const std::string rate = "bandwidth/host/memcpy/node0->node0/pageable/64KiB/gbps";
  EXPECT_EQ(metric(pair(a, b), rate).sides[1].verdict, Verdict::same);
  compare::Options strict;
  strict.min_change_fraction = 0.01;
  EXPECT_EQ(metric(pair(a, b, strict), rate).sides[1].verdict, Verdict::worse);
  scale_sweep(b, 0, 1.0 / 0.97 / 0.97);  // now 3% faster than a
  EXPECT_EQ(metric(pair(a, b, strict), rate).sides[1].verdict, Verdict::better);
}

// Intervals of the medians say how well a run knows its own median, not how far a second run
// lands: a difference inside the samples' own scatter is noise even when the intervals are apart.
TEST(Compare, IntervalsApartButWithinTheSamplesScatterIsSame) {
  const std::string time = "bandwidth/host/memcpy/node0->node0/pageable/4KiB/time_us";
  // Samples with a CV of 15%, medians known to +-1%: 10% slower is within the CV (nvbench's rule).
  report::Report a = bandwidth_report(3, 0.01, 0.15), b = a;
  for (auto* r : {&a, &b})
    for (auto& p : r->bandwidth->sweeps[0].points) p.p95_us = p.median_us * 1.01;  // typical range no help
  scale_sweep(b, 0, 0.9);
  auto within_cv = metric(pair(a, b), time).sides[1];
  EXPECT_EQ(within_cv.verdict, Verdict::same);
  EXPECT_EQ(within_cv.test, "interval/cv") << "intervals apart: the label names the noise rule that decided";
  scale_sweep(b, 0, 0.7 / 0.9);  // 30% slower: past the CV and outside a's typical range
  EXPECT_EQ(metric(pair(a, b), time).sides[1].verdict, Verdict::worse);

  // Two modes, 1x and 5x: a's samples span both (its min..p95 reaches 5.2x), and b's median lands
  // on the slow one. Intervals apart, the CV (0.8) below the 4x jump: still the same machine.
  report::Report fast = bandwidth_report(3, 0.01, 0.8), slow = fast;
  for (auto& p : fast.bandwidth->sweeps[0].points) p.p95_us = p.median_us * 5.2;
  for (auto& p : slow.bandwidth->sweeps[0].points) {
    p.p95_us = p.median_us * 5.2;
    p.min_us = p.median_us * 0.95;
  }
  scale_sweep(slow, 0, 0.2);
  EXPECT_EQ(metric(pair(fast, slow), time).sides[1].verdict, Verdict::same);
  EXPECT_EQ(metric(pair(fast, slow), time).sides[1].test, "interval/modes");
  // The same jump where neither run's samples reach the other's median: worse.
  for (auto& p : fast.bandwidth->sweeps[0].points) p.p95_us = p.median_us * 1.05;
  for (auto& p : slow.bandwidth->sweeps[0].points) p.min_us = p.median_us * 0.9;
  EXPECT_EQ(metric(pair(fast, slow), time).sides[1].verdict, Verdict::worse);
}

// Pass medians: each pass a rerun in miniature. Two runs whose passes overlap are the same machine
// however tight each run's own interval; ranges apart (and the rest of the test) make it worse.
TEST(Compare, OverlappingPassMediansAreSameAndSeparatedOnesWorse) {
  const std::string time = "bandwidth/host/memcpy/node0->node0/pageable/4KiB/time_us";
  const std::string rate = "bandwidth/host/memcpy/node0->node0/pageable/4KiB/gbps";
  report::Report a = bandwidth_report(3, 0.005, 0.01), b = a;  // +-0.5% intervals, 1% CV
  scale_sweep(b, 0, 1 / 1.15);                                   // b 15% slower
  ASSERT_EQ(metric(pair(a, b), time).sides[1].verdict, Verdict::worse) << "without passes: apart";
  // a's passes ranged 0.95..1.12 of its median, b's 0.92..1.05 of its own: they overlap.
  for (auto& p : a.bandwidth->sweeps[0].points) p.visit_medians_us = {p.median_us * 0.95, p.median_us, p.median_us * 1.12};
  for (auto& p : b.bandwidth->sweeps[0].points) p.visit_medians_us = {p.median_us * 1.05, p.median_us * 0.92};
  EXPECT_EQ(metric(pair(a, b), time).sides[1].verdict, Verdict::same);
  EXPECT_EQ(metric(pair(a, b), time).sides[1].test, "interval/passes");
  EXPECT_EQ(metric(pair(a, b), rate).sides[1].verdict, Verdict::same) << "the rate carries the passes inverted";
  // Narrow passes (+-2%): 1.0..1.02 against 1.127..1.173 of a's median: apart, so worse again.
  for (auto* r : {&a, &b})
    for (auto& p : r->bandwidth->sweeps[0].points) p.visit_medians_us = {p.median_us * 0.98, p.median_us * 1.02};
  EXPECT_EQ(metric(pair(a, b), time).sides[1].verdict, Verdict::worse);
  EXPECT_EQ(metric(pair(a, b), rate).sides[1].verdict, Verdict::worse);
  EXPECT_EQ(metric(pair(a, b), time).sides[1].test, "interval") << "no noise rule held";
}

// Host copies of a few bytes settle a few CPU cycles apart from one run to the next: the report's
// measured cycle sets a resolution of 8 cycles a copy, under which a difference is the loop's.
TEST(Compare, HostCopiesDifferingByUnderEightCyclesAreSameAndByMoreWorse) {
  const std::string time = "bandwidth/host/memcpy/node0->node0/pageable/4B/time_us";
  const std::string rate = "bandwidth/host/memcpy/node0->node0/pageable/4B/gbps";
  auto tiny = [](double median_ns, std::optional<double> cycle_ns) {
    report::Report r;
    r.bandwidth.emplace();
    report::BandwidthEngineStatus host;
    host.cycle_ns = cycle_ns;
    r.bandwidth->engines = {host};
    report::BandwidthSweep s = sweep(report::CopyKind::memcpy, 0, 0, 0);
    s.points = {point(4, median_ns / 1e3, 0.005, 0.01)};  // +-0.5% interval, 1% CV
    r.bandwidth->sweeps = {s};
    return r;
  };
  // 0.25 ns cycles: 2 ns resolution. 1.5 ns -> 3.4 ns is 127% slower, but 1.9 ns.
  auto view = report::metrics_of(tiny(1.5, 0.25));
  auto row = std::find_if(view.begin(), view.end(), [&](const auto& m) { return m.path == time; });
  ASSERT_NE(row, view.end());
  ASSERT_TRUE(row->spread->resolution_low && row->spread->resolution_high);
  EXPECT_NEAR(*row->spread->resolution_high - row->value, 8 * 0.25 / 1e3, 1e-12);
  EXPECT_EQ(*row->spread->resolution_low, 0.0) << "a time is never below zero";
  EXPECT_EQ(metric(pair(tiny(1.5, 0.25), tiny(3.4, 0.25)), time).sides[1].verdict, Verdict::same);
  EXPECT_EQ(metric(pair(tiny(1.5, 0.25), tiny(3.4, 0.25)), rate).sides[1].verdict, Verdict::same);
  EXPECT_EQ(metric(pair(tiny(1.5, 0.25), tiny(3.4, 0.25)), time).sides[1].test, "interval/resolution");
  // 2.1 ns apart: worse, in both units.
  EXPECT_EQ(metric(pair(tiny(1.5, 0.25), tiny(3.6, 0.25)), time).sides[1].verdict, Verdict::worse);
  EXPECT_EQ(metric(pair(tiny(1.5, 0.25), tiny(3.6, 0.25)), rate).sides[1].verdict, Verdict::worse);
  // The slower machine's cycle decides: 0.3 ns cycles resolve 2.4 ns.
  EXPECT_EQ(metric(pair(tiny(1.5, 0.25), tiny(3.6, 0.3)), time).sides[1].verdict, Verdict::same);
  // Grouped runs narrow the noise of the medians, not the loop's resolution: 1.5 and 1.6 ns
  // against 3.4 ns is same; against 3.8 ns (2.2 ns past the closer run) worse.
  auto grouped = [&](double b_ns) {
    return compare::compare_sides({{"a1,a2", {tiny(1.5, 0.25), tiny(1.6, 0.25)}}, {"b", {tiny(b_ns, 0.25)}}}, 0);
  };
  EXPECT_EQ(metric(grouped(3.4), time).sides[1].verdict, Verdict::same);
  EXPECT_EQ(metric(grouped(3.4), time).sides[1].test, "runs/resolution");
  EXPECT_EQ(metric(grouped(3.8), time).sides[1].verdict, Verdict::worse);
  EXPECT_EQ(metric(grouped(3.8), time).sides[1].test, "runs");
  // The fit's start-up time is a per-copy time too: the same 8 cycles.
  report::Report fitted = tiny(1.5, 0.25);
  fitted.bandwidth->sweeps[0].fit = report::BandwidthFit{0.0015, 2.0, std::nullopt, 0.01, 8};
  bool t0_seen = false;
  for (const auto& m : report::metrics_of(fitted)) {
    if (!m.path.ends_with("/fit/t0_us")) continue;
    t0_seen = true;
    ASSERT_TRUE(m.spread && m.spread->resolution_low && m.spread->resolution_high) << m.path;
    EXPECT_NEAR(*m.spread->resolution_high, 0.0015 + 0.002, 1e-12);
    EXPECT_EQ(*m.spread->resolution_low, 0.0);
  }
  EXPECT_TRUE(t0_seen);
  // Judged by the fit's scatter (1%), 1.5 -> 3.4 ns is far outside; within the resolution: same.
  report::Report fitted_slow = tiny(3.4, 0.25);
  fitted_slow.bandwidth->sweeps[0].fit = report::BandwidthFit{0.0034, 2.0, std::nullopt, 0.01, 8};
  const std::string t0 = "bandwidth/host/memcpy/node0->node0/pageable/fit/t0_us";
  EXPECT_EQ(metric(pair(fitted, fitted_slow), t0).sides[1].verdict, Verdict::same);
  EXPECT_EQ(metric(pair(fitted, fitted_slow), t0).sides[1].test, "cv/resolution");
  fitted_slow.bandwidth->sweeps[0].fit->t0_us = 0.0038;
  EXPECT_EQ(metric(pair(fitted, fitted_slow), t0).sides[1].verdict, Verdict::worse);
  // A report without its cycle (schema < 2.5) has no resolution: the intervals decide.
  EXPECT_EQ(metric(pair(tiny(1.5, std::nullopt), tiny(3.4, std::nullopt)), time).sides[1].verdict, Verdict::worse);
  // A GPU engine's copies are not the host loop's: no resolution from the host's cycle.
  report::Report gpu = tiny(1.5, 0.25);
  gpu.bandwidth->sweeps[0].engine = report::BandwidthEngine::cuda;
  std::size_t timed = 0;
  for (const auto& m : report::metrics_of(gpu)) {
    if (!m.spread) continue;
    ++timed;
    EXPECT_FALSE(m.spread->resolution_low || m.spread->resolution_high) << m.path;
  }
  EXPECT_EQ(timed, 2u);
}

TEST(Compare, CvBandDecidesWhenNoIntervalIsStored) {
  report::Report a = bandwidth_report(3, 0.01, 0.05);
  for (auto& s : a.bandwidth->sweeps)
    for (auto& p : s.points) p.median_ci_low_us = p.median_ci_high_us = std::nullopt;
  report::Report b = a;
  scale_sweep(b, 0, 0.9);  // 10% < 2 x sqrt(2) x 5% = 14%: within the noise
  const std::string rate = "bandwidth/host/memcpy/node0->node0/pageable/4KiB/gbps";
  auto within = metric(pair(a, b), rate).sides[1];
  EXPECT_EQ(within.verdict, Verdict::same);
  EXPECT_EQ(within.test, "cv");
  scale_sweep(b, 0, 0.8 / 0.9);  // 20%: outside
  EXPECT_EQ(metric(pair(a, b), rate).sides[1].verdict, Verdict::worse);
}

TEST(Compare, GroupsUseTheSpreadAcrossRuns) {
  report::Report a1 = bandwidth_report(3, 0.01, 0.01), a2 = a1, b1 = a1, b2 = a1;
  scale_sweep(a2, 0, 0.88);  // the baseline's own runs differ by 12%
  scale_sweep(b1, 0, 0.92);
  scale_sweep(b2, 0, 0.9);
  const std::string rate = "bandwidth/host/memcpy/node0->node0/pageable/4KiB/gbps";
  auto within = compare::compare_sides({{"a1,a2", {a1, a2}}, {"b1,b2", {b1, b2}}}, 0);
  EXPECT_EQ(metric(within, rate).sides[1].verdict, Verdict::same);
  EXPECT_EQ(metric(within, rate).sides[1].test, "runs");
  // Alone, a1 against b1 is 8% apart with +-1% intervals: worse.
  EXPECT_EQ(metric(pair(a1, b1), rate).sides[1].verdict, Verdict::worse);
  report::Report c1 = a1, c2 = a1;
  scale_sweep(c1, 0, 0.7);
  scale_sweep(c2, 0, 0.72);
  auto outside = compare::compare_sides({{"a1,a2", {a1, a2}}, {"c1,c2", {c1, c2}}}, 0);
  EXPECT_EQ(metric(outside, rate).sides[1].verdict, Verdict::worse);
}

TEST(Compare, ReadValuesAreSameOrChangedAndMissingOnesOnlyInOne) {
  auto with_link = [](double gts) {
    report::Report r;
    r.topology.emplace();
    report::PciDevice d;
    d.bdf = "0000:01:00.0";
    d.link.current_gts = gts;
    r.topology->pci_devices.push_back(d);
    report::Gpu g;
    g.bdf = d.bdf;
    r.topology->gpus.push_back(g);
    return r;
  };
  const std::string link = "topology/gpus/0/link/current_gts";
  EXPECT_EQ(metric(pair(with_link(32), with_link(32)), link).sides[1].verdict, Verdict::same);
  auto downtrained = metric(pair(with_link(32), with_link(16)), link).sides[1];
  EXPECT_EQ(downtrained.verdict, Verdict::changed);
  EXPECT_EQ(downtrained.test, "equal");
  report::Report b = with_link(32);
  b.bandwidth.emplace();
  b.bandwidth->sweeps = {sweep(report::CopyKind::memcpy, 1, 0.01, 0.01)};
  auto c = pair(with_link(32), b);
  EXPECT_EQ(metric(c, "bandwidth/host/memcpy/node0->node0/pageable/4KiB/gbps").sides[1].verdict, Verdict::only_in_one);
}

TEST(Compare, ThreeReportsAgainstAChosenBaseline) {
  report::Report a = bandwidth_report(2, 0.01, 0.01), b = a, c = a;
  scale_sweep(b, 0, 0.8);
  scale_sweep(c, 0, 1.2);
  auto r = compare::compare_sides({{"a", {a}}, {"b", {b}}, {"c", {c}}}, 2);
  const auto& m = metric(r, "bandwidth/host/memcpy/node0->node0/pageable/4KiB/gbps");
  EXPECT_EQ(m.sides[0].verdict, Verdict::worse);
  EXPECT_EQ(m.sides[1].verdict, Verdict::worse);
  EXPECT_EQ(m.sides[2].verdict, Verdict::same);
  EXPECT_NEAR(*m.sides[1].change_fraction, 0.8 / 1.2 - 1, 1e-9);
}

report::Report fixture(const std::string& relative) {
  return report::read_report_file(std::string(INTERPROBE_SOURCE_DIR) + "/" + relative);
}

const compare::SettingDiff* setting(const compare::Comparison& c, const std::string& name) {
  for (const auto& d : c.settings)
    if (d.name == name) return &d;
  return nullptr;
}

TEST(Compare, SettingsDiffOfTheSeedCaseAgainstThisVmListsWhatDiffers) {
  report::Report seed = fixture("tests/fixtures/seed-case/report.json");
  report::Report vm = fixture("examples/reports/this-vm-run.json");
  auto c = pair(seed, vm);
  auto own = compare::settings_of(seed), other = compare::settings_of(vm);
  auto value = [](const auto& list, const std::string& name) -> std::string {
    for (const auto& [n, v] : list)
      if (n == name) return v;
    return "-";
  };
  std::int64_t expected_differ = 0;
  std::set<std::string> names;
  for (const auto& [n, v] : own) names.insert(n);
  for (const auto& [n, v] : other) names.insert(n);
  for (const auto& n : names) {
    bool differs = value(own, n) != value(other, n);
    expected_differ += differs;
    EXPECT_EQ(setting(c, n) != nullptr, differs) << n;
  }
  EXPECT_EQ(static_cast<std::int64_t>(c.settings.size()), expected_differ);
  EXPECT_GT(expected_differ, 3);
  // The seed case is 8 GPUs in a Proxmox guest; this VM has none.
  const auto* gpus = setting(c, "topology/gpu_count");
  ASSERT_NE(gpus, nullptr);
  EXPECT_EQ(gpus->values[0], "8");
  EXPECT_NE(gpus->values[1], "8");
  // 30 s against 5 s of collective probe: how long interprobe ran, not how fast the machine is.
  const auto& duration = metric(c, "probes/collective/duration_s").sides[1];
  EXPECT_EQ(duration.verdict, Verdict::same);
  EXPECT_EQ(duration.test, "not judged");
  EXPECT_LT(*duration.change_fraction, -0.5);
  // A report against itself: nothing differs, every metric same.
  auto self = pair(seed, seed);
  EXPECT_TRUE(self.settings.empty());
  for (const auto& m : self.metrics) EXPECT_EQ(m.sides[1].verdict, Verdict::same) << m.path;
}

TEST(Compare, DocumentAndJsonCarryEveryMetricAndEscapeLabels) {
  report::Report a = bandwidth_report(3, 0.01, 0.01), b = a;
  scale_sweep(b, 1, 0.9);
  auto c = compare::compare_sides({{"a\x1b[31m.json", {a}}, {"b.json", {b}}}, 0);
  std::string text = render::render_text(compare::comparison_document(c), {});
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("worse"), std::string::npos);
  std::string md = render::render_markdown(compare::comparison_document(c));
  EXPECT_NE(md.find("| metric"), std::string::npos) << md.substr(0, 400);
  nlohmann::json j = compare::comparison_json(c);
  EXPECT_EQ(j["metrics"].size(), c.metrics.size());
  EXPECT_EQ(j["metrics"][0]["sides"][1]["verdict"], "worse");
  EXPECT_EQ(j["labels"][1], "b.json");
}

// Issue 36: a path on one side only is `only in A` / `only in B`, never `same`.
TEST(Compare, OneSidedPathsAreOnlyInTheirSideNeverSame) {
  report::Report a = bandwidth_report(4, 0.01, 0.01);
  report::Report empty;
  for (auto [c, letter, here] : {std::tuple{pair(a, empty), "A", false}, std::tuple{pair(empty, a), "B", true}}) {
    auto it = std::find_if(c.series.begin(), c.series.end(), [](const auto& s) { return s.series == kStagedRate; });
    ASSERT_NE(it, c.series.end());
    const auto& side = it->sides[1];
    EXPECT_EQ(side.verdict, Verdict::only_in_one);
    EXPECT_EQ(side.sizes, 0);
    EXPECT_EQ(here ? side.sizes_only_here : side.sizes_only_in_baseline, 4);
    std::string text = render::render_text(compare::comparison_document(c, true), {});
    std::string row = text.substr(text.find(kStagedRate));
    row = row.substr(0, row.find('\n'));
    EXPECT_NE(row.find(std::string("only in ") + letter + " (4 sizes)"), std::string::npos) << row;
    EXPECT_EQ(row.find("same"), std::string::npos) << row;
  }
}

// A path whose own test says `same` while some of its sizes moved is `mixed`, with the counts.
TEST(Compare, APathWithSomeSizesWorseIsMixedNotSame) {
  report::Report a = bandwidth_report(6, 0.01, 0.01);
  report::Report b = a;
  auto& points = b.bandwidth->sweeps[1].points;
  points[5].gbps *= 0.25;  // the largest size at a quarter: worse by its interval
  for (double* t : {&points[5].min_us, &points[5].median_us, &points[5].p95_us, &points[5].max_us}) *t *= 4;
  *points[5].median_ci_low_us *= 4;
  *points[5].median_ci_high_us *= 4;
  auto c = pair(a, b);
  EXPECT_EQ(metric(c, "bandwidth/host/staged/node0->node0/pageable/4MiB/gbps").sides[1].verdict, Verdict::worse);
  auto it = std::find_if(c.series.begin(), c.series.end(), [](const auto& s) { return s.series == kStagedRate; });
  ASSERT_NE(it, c.series.end());
  EXPECT_EQ(it->sides[1].verdict, Verdict::mixed);
  EXPECT_EQ(it->sides[1].sizes_worse, 1);
  EXPECT_EQ(c.series.front().sides[1].verdict, Verdict::mixed) << "mixed ranks right after worse";
  std::string text = render::render_text(compare::comparison_document(c, false), {});
  EXPECT_NE(text.find("mixed (1 of 6 worse, 0 better)"), std::string::npos) << text;
  EXPECT_EQ(compare::comparison_json(c)["series"][0]["sides"][1]["verdict"], "mixed");
}

// The default view is a summary: what moved, capped, and where the rest is.
TEST(Compare, TheShortViewNamesWhatMovedAndPointsAtDetail) {
  report::Report a = bandwidth_report(10, 0.01, 0.01), b = a;
  scale_sweep(b, 1, 0.8);
  auto extra = sweep(report::CopyKind::memcpy, 3, 0.01, 0.01);  // a path measured on B only
  extra.dst = "node1";
  b.bandwidth->sweeps.push_back(extra);
  auto c = pair(a, b);
  std::string brief = render::render_text(compare::comparison_document(c, false), {});
  std::string full = render::render_text(compare::comparison_document(c, true), {});
  EXPECT_NE(brief.find("what changed"), std::string::npos) << brief;
  EXPECT_NE(brief.find("--detail"), std::string::npos);
  EXPECT_NE(brief.find("more moved rows not shown"), std::string::npos) << "20 staged rows moved, 8 shown";
  EXPECT_NE(brief.find("measured on one side only"), std::string::npos) << brief;
  EXPECT_NE(brief.find("only in B"), std::string::npos);
  EXPECT_EQ(brief.find("metrics, regressions first"), std::string::npos);
  EXPECT_NE(full.find("metrics, regressions first"), std::string::npos);
  EXPECT_LT(std::count(brief.begin(), brief.end(), '\n'), std::count(full.begin(), full.end(), '\n'));
}

}  // namespace
