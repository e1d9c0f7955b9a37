#include <gtest/gtest.h>

#include "common/statistics.hpp"

using namespace interprobe;

TEST(Statistics, SummarizesKnownSamples) {
  auto s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.samples, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_NEAR(s.stddev, 1.5811388, 1e-6);
  EXPECT_NEAR(s.cv, 0.5270463, 1e-6);
  EXPECT_NEAR(s.p95, 4.8, 1e-9);
}

TEST(Statistics, EdgeCases) {
  auto empty = summarize({});
  EXPECT_EQ(empty.samples, 0u);
  auto one = summarize({7});
  EXPECT_DOUBLE_EQ(one.median, 7);
  EXPECT_DOUBLE_EQ(one.cv, 0);
  EXPECT_DOUBLE_EQ(percentile({1, 2}, 0.5), 1.5);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 1.0), 4);
}
