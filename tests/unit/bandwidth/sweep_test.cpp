#include <gtest/gtest.h>

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

TEST(Sweep, InterruptKeepsFinishedSizes) {
  FakeEngine engine(1.0, 10.0);
  engine.on_prepare = [](std::uint64_t bytes) {
    if (bytes == 4096) request_interrupt();
  };
  SweepOptions o = sizes(1024, 1u << 20);
  std::vector<report::BandwidthPoint> seen;
  EXPECT_THROW(run_sweep(engine, o, [&](const report::BandwidthPoint& p) { seen.push_back(p); }), InterruptedError);
  clear_interrupt();
  ASSERT_EQ(seen.size(), 2u);  // 1K and 2K finished; 4K was under way
  EXPECT_EQ(seen.back().bytes, 2048);
}
