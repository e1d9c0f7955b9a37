#include <gtest/gtest.h>

#include "probes/bandwidth/fit.hpp"

using namespace interprobe;

namespace {
std::vector<TimedSize> line(double t0_us, double gbps, std::uint64_t min, std::uint64_t max) {
  std::vector<TimedSize> pts;
  for (std::uint64_t b = min; b <= max; b *= 2) pts.push_back({double(b), t0_us + double(b) / (gbps * 1e3)});
  return pts;
}
}  // namespace

TEST(Fit, ExactModelIsRecovered) {
  auto fit = fit_latency_bandwidth(line(10.0, 12.0, 4, 1u << 28));
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->peak_gbps, 12.0, 1e-6);
  EXPECT_NEAR(fit->t0_us, 10.0, 1e-6);
  EXPECT_NEAR(*fit->n_half_bytes, 120000.0, 1e-2);
  EXPECT_NEAR(fit->residual_fraction, 0.0, 1e-9);
  EXPECT_EQ(fit->points_used, 27);
}

TEST(Fit, OneDisturbedLargeSizeDoesNotSwingThePeak) {
  auto pts = line(5.0, 50.0, 4, 1u << 30);
  pts[pts.size() - 2].time_us *= 1.6;  // 512 MiB copy disturbed by another process
  auto fit = fit_latency_bandwidth(pts);
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->peak_gbps, 50.0, 0.5);
  EXPECT_NEAR(fit->t0_us, 5.0, 0.05);
  EXPECT_EQ(fit->points_used, static_cast<std::int64_t>(pts.size()) - 1);  // the disturbed size is left out, visibly
}

TEST(Fit, NeedsTwoSizesAndAPositiveSlope) {
  EXPECT_FALSE(fit_latency_bandwidth({}));
  EXPECT_FALSE(fit_latency_bandwidth({{1024, 3.0}}));
  EXPECT_FALSE(fit_latency_bandwidth({{1024, 3.0}, {1024, 3.1}}));
  EXPECT_FALSE(fit_latency_bandwidth({{1024, 5.0}, {4096, 3.0}}));  // bigger copies faster: no model
  EXPECT_FALSE(fit_latency_bandwidth({{1024, 0.0}, {4096, -1.0}}));
}

TEST(Fit, LatencyIsNeverNegative) {
  auto fit = fit_latency_bandwidth({{1000, 0.01}, {1e6, 100}, {1e9, 1e5}});
  ASSERT_TRUE(fit);
  EXPECT_GE(fit->t0_us, 0.0);
}

TEST(Fit, HostCopiesServedFromCacheDoNotSetThePeak) {
  // memcpy: ~10 ns per call; copies below 32 MiB run from cache at 100 GB/s, larger ones
  // from DRAM at 10 GB/s. The peak is the DRAM rate, t0 the call cost.
  std::vector<TimedSize> pts;
  for (double b = 1; b <= double(1u << 30); b *= 2)
    pts.push_back({b, 0.01 + b / ((b < double(32u << 20) ? 100.0 : 10.0) * 1e3)});
  auto fit = fit_latency_bandwidth(pts);
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->peak_gbps, 10.0, 0.1);
  EXPECT_NEAR(fit->t0_us, 0.01, 0.001);
  EXPECT_LT(fit->points_used, 31);  // the cache-resident sizes are another regime
  EXPECT_GE(fit->points_used, 6);
}
