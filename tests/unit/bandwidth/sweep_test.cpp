#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "fake_engine.hpp"
#include "probes/bandwidth/size_plan.hpp"
#include "probes/bandwidth/sweep.hpp"
#include "common/errors.hpp"
#include "common/interrupt.hpp"

using namespace interprobe;
using interprobe::testing::FakeEngine;

namespace {

report::BandwidthSweep sweep_through(CopyEngine& engine, const SweepOptions& o) {
  report::BandwidthSweep sweep = engine.describe();
  run_sweep(engine, o, [&](const report::BandwidthPoint& p) { sweep.points.push_back(p); });
  sweep.fit = fit_sweep(sweep);
  return sweep;
}

SweepOptions sizes(std::uint64_t min, std::uint64_t max) {
  SweepOptions o;
  o.sizes = geometric_sizes(min, max, 2);
  return o;
}

}  // namespace

TEST(Sweep, RecoversKnownLatencyAndBandwidthWithinOnePercent) {
  FakeEngine engine(/*t0_us=*/2.5, /*gbps=*/24.0);
  engine.noise = 0.004;
  auto sweep = sweep_through(engine, sizes(4, 256u << 20));
  ASSERT_EQ(sweep.points.size(), 27u);
  ASSERT_TRUE(sweep.fit);
  EXPECT_NEAR(sweep.fit->peak_gbps, 24.0, 0.24);
  EXPECT_NEAR(sweep.fit->t0_us, 2.5, 0.025);
  ASSERT_TRUE(sweep.fit->n_half_bytes);
  EXPECT_NEAR(*sweep.fit->n_half_bytes, 2.5 * 24.0 * 1e3, 2.5 * 24.0 * 1e3 * 0.02);
  EXPECT_LT(sweep.fit->residual_fraction, 0.01);
  // Large sizes run at the link rate, tiny ones are all latency.
  EXPECT_NEAR(sweep.points.back().gbps, 24.0, 0.3);
  EXPECT_NEAR(sweep.points.front().median_us, 2.5, 0.03);
}

TEST(Sweep, RecoversAFastLinkWithTinyLatency) {
  FakeEngine engine(0.05, 400.0);  // NVLink-like rate, host-call-like latency
  auto sweep = sweep_through(engine, sizes(1, 1u << 30));
  ASSERT_TRUE(sweep.fit);
  EXPECT_NEAR(sweep.fit->peak_gbps, 400.0, 4.0);
  EXPECT_NEAR(sweep.fit->t0_us, 0.05, 0.0005);
}

TEST(Sweep, BidirectionalPathsCountBothDirections) {
  FakeEngine engine(3.0, 50.0);
  engine.directions = 2;
  auto sweep = sweep_through(engine, sizes(1024, 64u << 20));
  ASSERT_TRUE(sweep.fit);
  EXPECT_NEAR(sweep.fit->peak_gbps, 50.0, 0.5);
  EXPECT_NEAR(sweep.points.back().gbps, 50.0, 2.0);
}

TEST(Sweep, BatchesSmallCopiesUntilASampleLastsLongEnough) {
  FakeEngine engine(0.01, 10.0);
  engine.min_sample_us = 500;
  SweepOptions o;
  o.sizes = {8};
  auto p = measure_size(engine, 8, o, 1);
  double per_copy = engine.copy_time_us(8);
  EXPECT_GE(static_cast<double>(p.copies_per_sample) * per_copy, 500.0);
  EXPECT_LE(static_cast<double>(p.copies_per_sample) * per_copy, 500.0 * 2 * 1.3);
  EXPECT_NEAR(p.median_us, per_copy, per_copy * 1e-9);  // times are per copy, not per sample
}

TEST(Sweep, ANoiselessPathStopsAtTheMinimumSamples) {
  FakeEngine engine(1.0, 10.0);
  SweepOptions o;
  o.min_samples = 7;
  auto p = measure_size(engine, 4096, o, 1);
  EXPECT_EQ(p.samples, 7);
  EXPECT_EQ(p.stop_reason, report::StopReason::target_cv);
  EXPECT_EQ(p.verified, true);
}

TEST(Sweep, ANoisyPathSamplesUntilItsBudgetOrCap) {
  FakeEngine engine(1.0, 10.0);
  engine.noise = 0.05;  // 5% spread, target 1%: never met
  SweepOptions o;
  o.max_samples = 40;
  o.size_budget_s = 1e9;
  auto p = measure_size(engine, 4096, o, 1);
  EXPECT_EQ(p.samples, 40);
  EXPECT_EQ(p.stop_reason, report::StopReason::max_samples);
  EXPECT_GT(p.cv_fraction, 0.01);
}

TEST(Sweep, StopRule) {
  SweepOptions o;
  o.min_samples = 5;
  o.max_samples = 50;
  o.target_cv = 0.01;
  o.size_budget_s = 0.5;
  SampleStats s;
  s.samples = 4;
  s.cv = 0.0;
  EXPECT_FALSE(should_stop(s, o, 10.0));  // below the minimum nothing stops it, not even the budget
  s.samples = 5;
  EXPECT_EQ(should_stop(s, o, 0.0), StopReason::target_cv);
  s.cv = 0.02;
  EXPECT_FALSE(should_stop(s, o, 0.1));
  EXPECT_EQ(should_stop(s, o, 0.5), StopReason::budget);
  s.samples = 50;
  EXPECT_EQ(should_stop(s, o, 0.1), StopReason::max_samples);
  s.cv = 0.01;  // exactly at the target counts as reached
  s.samples = 6;
  EXPECT_EQ(should_stop(s, o, 0.0), StopReason::target_cv);
}

TEST(Sweep, CorruptDataIsRecordedPerSize) {
  FakeEngine engine(1.0, 10.0);
  engine.corrupt = true;
  auto sweep = sweep_through(engine, sizes(64, 1024));
  for (const auto& p : sweep.points) EXPECT_EQ(p.verified, false);
}

TEST(Sweep, InterruptKeepsSizesWithAFinishedPass) {
  FakeEngine engine(1.0, 10.0);
  SweepOptions o = sizes(1024, 1u << 20);  // 11 sizes, 2 passes: 22 visits
  std::size_t prepares = 0;
  engine.on_prepare = [&](std::uint64_t) {
    if (++prepares == 14) request_interrupt();  // during pass 2's third visit
  };
  std::vector<report::BandwidthPoint> seen;
  EXPECT_THROW(run_sweep(engine, o, [&](const report::BandwidthPoint& p) { seen.push_back(p); }), InterruptedError);
  clear_interrupt();
  // Every size finished pass 1; two finished both passes, the third was under way.
  ASSERT_EQ(seen.size(), 11u);
  int complete = 0;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(seen[i - 1].bytes, seen[i].bytes);  // ascending, whatever the visit order
    }
    if (seen[i].stop_reason != interprobe::report::StopReason::interrupted) ++complete;
    EXPECT_GE(seen[i].samples, 3);  // pass 1's share of the 6 minimum samples
  }
  EXPECT_EQ(complete, 2);
}

TEST(Sweep, InterruptInTheFirstPassKeepsOnlyFinishedVisits) {
  FakeEngine engine(1.0, 10.0);
  SweepOptions o = sizes(1024, 8192);
  std::size_t prepares = 0;
  engine.on_prepare = [&](std::uint64_t) {
    if (++prepares == 2) request_interrupt();
  };
  std::vector<report::BandwidthPoint> seen;
  EXPECT_THROW(run_sweep(engine, o, [&](const report::BandwidthPoint& p) { seen.push_back(p); }), InterruptedError);
  clear_interrupt();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].stop_reason, interprobe::report::StopReason::interrupted);
}

TEST(Sweep, VisitOrderIsShuffledRepeatableAndCoversEverySizePerPass) {
  auto order = visit_order(11, 3, 42);
  ASSERT_EQ(order.size(), 33u);
  EXPECT_EQ(order, visit_order(11, 3, 42));  // a fixed seed: the same order every run
  EXPECT_NE(order, visit_order(11, 3, 43));
  std::vector<std::size_t> ascending(11);
  for (std::size_t i = 0; i < 11; ++i) ascending[i] = i;
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<std::size_t> one(order.begin() + pass * 11, order.begin() + (pass + 1) * 11);
    auto sorted = one;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, ascending) << "pass " << pass << " visits every size once";
    EXPECT_NE(one, ascending) << "pass " << pass << " is shuffled";
  }
  for (std::size_t i = 1; i < order.size(); ++i) EXPECT_NE(order[i], order[i - 1]) << "no size twice in a row";
  EXPECT_EQ(visit_order(1, 2, 42), (std::vector<std::size_t>{0, 0}));
  EXPECT_TRUE(visit_order(0, 2, 42).empty());
}

TEST(Sweep, PassesPoolSamplesAndVisitEverySizeEachPass) {
  FakeEngine engine(1.0, 10.0);
  SweepOptions o = sizes(1024, 64u << 10);  // 7 sizes
  o.passes = 3;
  o.min_samples = 9;
  std::vector<std::uint64_t> prepared;
  engine.on_prepare = [&](std::uint64_t bytes) { prepared.push_back(bytes); };
  auto sweep = sweep_through(engine, o);
  ASSERT_EQ(prepared.size(), 21u);
  EXPECT_FALSE(std::is_sorted(prepared.begin(), prepared.begin() + 7));  // not small to large
  ASSERT_EQ(sweep.points.size(), 7u);
  for (const auto& p : sweep.points) {
    EXPECT_EQ(std::count(prepared.begin(), prepared.end(), static_cast<std::uint64_t>(p.bytes)), 3);
    EXPECT_EQ(p.samples, 9);  // 3 per pass, pooled
    EXPECT_EQ(p.stop_reason, interprobe::report::StopReason::target_cv);
    ASSERT_TRUE(p.median_ci_low_us && p.median_ci_high_us);
    EXPECT_LE(*p.median_ci_low_us, p.median_us);
    EXPECT_GE(*p.median_ci_high_us, p.median_us);
  }
}

// A machine that slows down steadily during the sweep: with the sizes in a shuffled order over
// two passes, no size inherits the whole drift, so the rates stay on one line.
TEST(Sweep, DriftSpreadsOverTheSizesInsteadOfBiasingTheLastOnes) {
  auto worst_error = [](int passes) {
    FakeEngine engine(0.0, 10.0);
    engine.drift_per_call = 2e-4;  // +0.02% per call: ~30% over the sweep
    SweepOptions o = sizes(1u << 20, 1u << 30);
    o.passes = passes;
    o.min_samples = 6;
    o.target_cv = 0.5;
    auto sweep = sweep_through(engine, o);
    std::vector<double> rates;
    for (const auto& p : sweep.points) rates.push_back(p.gbps);
    auto [lo, hi] = std::minmax_element(rates.begin(), rates.end());
    return (*hi - *lo) / *hi;
  };
  double one_pass = worst_error(1), two_passes = worst_error(2);
  EXPECT_GT(one_pass, 0.01);
  EXPECT_LT(two_passes, one_pass);
}

TEST(Sweep, MedianIntervalIsNullBelowSixSamples) {
  FakeEngine engine(1.0, 10.0);
  SweepOptions o;
  o.min_samples = 5;
  o.passes = 1;
  auto p = measure_size(engine, 4096, o, 1);
  EXPECT_EQ(p.samples, 5);
  EXPECT_FALSE(p.median_ci_low_us);
  EXPECT_FALSE(p.median_ci_high_us);
}

// Each pass after the first gets new buffers; each point keeps its visits' own medians, in visit
// order, so a placement that made one pass slower shows as their spread.
TEST(Sweep, BuffersAreReplacedBetweenPassesAndEveryVisitKeepsItsMedian) {
  FakeEngine engine(1.0, 10.0);
  engine.slower_after_replacement = 0.1;
  SweepOptions o = sizes(1024, 8192);  // 4 sizes
  o.passes = 3;
  std::vector<report::BandwidthPoint> points;
  run_sweep(engine, o, [&](const report::BandwidthPoint& p) { points.push_back(p); });
  EXPECT_EQ(engine.replacements, 2u);
  ASSERT_EQ(points.size(), 4u);
  for (const auto& p : points) {
    ASSERT_EQ(p.visit_medians_us.size(), 3u) << p.bytes;
    double base = engine.copy_time_us(static_cast<std::uint64_t>(p.bytes));
    EXPECT_NEAR(p.visit_medians_us[0], base, 1e-9 * base);
    EXPECT_NEAR(p.visit_medians_us[1], base * 1.1, 1e-9 * base);
    EXPECT_NEAR(p.visit_medians_us[2], base * 1.2, 1e-9 * base);
  }
  o.passes = 1;
  points.clear();
  run_sweep(engine, o, [&](const report::BandwidthPoint& p) { points.push_back(p); });
  EXPECT_EQ(engine.replacements, 2u) << "one pass: nothing to replace";
  EXPECT_TRUE(points.at(0).visit_medians_us.empty()) << "one visit keeps no list";
}
