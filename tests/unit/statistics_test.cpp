#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

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

// The interval of the median: ranks from the binomial distribution, checked on known values and
// by simulation against distributions whose median is known.
TEST(MedianInterval, FewerThanSixSamplesHaveNoNinetyFivePercentInterval) {
  EXPECT_FALSE(median_interval({}));
  EXPECT_FALSE(median_interval({1.0}));
  // min..max of 5 samples misses the median with probability 2 / 32 = 6.25% > 5%.
  EXPECT_FALSE(median_interval({1, 2, 3, 4, 5}));
  // At 90% it exists: 93.75% coverage.
  auto five = median_interval({5, 1, 4, 2, 3}, 0.90);
  ASSERT_TRUE(five);
  EXPECT_DOUBLE_EQ(five->low, 1);
  EXPECT_DOUBLE_EQ(five->high, 5);
  EXPECT_NEAR(five->coverage, 0.9375, 1e-12);
}

TEST(MedianInterval, SixSamplesGiveMinToMax) {
  auto i = median_interval({6, 2, 9, 4, 1, 7});
  ASSERT_TRUE(i);
  EXPECT_DOUBLE_EQ(i->low, 1);
  EXPECT_DOUBLE_EQ(i->high, 9);
  EXPECT_EQ(i->low_rank, 1u);
  EXPECT_EQ(i->high_rank, 6u);
  EXPECT_NEAR(i->coverage, 1 - 2.0 / 64, 1e-12);
}

TEST(MedianInterval, KnownRanksForLargerSamples) {
  // Tables of the sign-test interval: n = 20 -> ranks 6..15 (95.9%), n = 100 -> 40..61 (96.5%).
  std::vector<double> twenty(20), hundred(100);
  for (std::size_t i = 0; i < twenty.size(); ++i) twenty[i] = static_cast<double>(20 - i);
  for (std::size_t i = 0; i < hundred.size(); ++i) hundred[i] = static_cast<double>(i + 1);
  auto a = median_interval(twenty);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->low_rank, 6u);
  EXPECT_EQ(a->high_rank, 15u);
  EXPECT_DOUBLE_EQ(a->low, 6);
  EXPECT_DOUBLE_EQ(a->high, 15);
  EXPECT_NEAR(a->coverage, 0.9586, 1e-4);
  auto b = median_interval(hundred);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->low_rank, 40u);
  EXPECT_EQ(b->high_rank, 61u);
  EXPECT_GE(b->coverage, 0.95);
  // Large n stays finite (0.5^n underflows a plain product near n = 1075).
  std::vector<double> many(3000, 1.0);
  auto c = median_interval(many);
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->low, 1);
  EXPECT_DOUBLE_EQ(c->high, 1);
  EXPECT_LT(c->low_rank, 1500u);
  EXPECT_GT(c->low_rank, 1400u);
}

TEST(MedianInterval, CoversTheTrueMedianAsOftenAsItSays) {
  std::mt19937_64 rng(20261203);
  struct Case {
    const char* name;
    double median;
    std::function<double()> draw;
  };
  std::exponential_distribution<double> exponential(1.0);
  std::normal_distribution<double> normal(10.0, 2.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<Case> cases = {
      {"exponential", std::log(2.0), [&] { return exponential(rng); }},
      {"normal", 10.0, [&] { return normal(rng); }},
      // Two modes, like copies that sometimes lose the CPU: 60% in [1, 1.1], 40% in [2, 2.2];
      // the median lies in the first mode at 1 + 0.1 x 0.5 / 0.6.
      {"two modes", 1.0 + 0.1 * 0.5 / 0.6,
       [&] { return uniform(rng) < 0.6 ? 1.0 + 0.1 * uniform(rng) : 2.0 + 0.2 * uniform(rng); }},
  };
  for (std::size_t n : {6u, 9u, 20u, 57u}) {
    for (auto& c : cases) {
      const int trials = 4000;
      int covered = 0;
      double promised = 0;
      for (int t = 0; t < trials; ++t) {
        std::vector<double> v(n);
        for (auto& x : v) x = c.draw();
        auto i = median_interval(v);
        ASSERT_TRUE(i);
        promised = i->coverage;
        if (i->low <= c.median && c.median <= i->high) ++covered;
      }
      double rate = static_cast<double>(covered) / trials;
      double se = std::sqrt(promised * (1 - promised) / trials);
      EXPECT_GE(promised, 0.95) << c.name << " n=" << n;
      EXPECT_NEAR(rate, promised, 4 * se + 1e-3) << c.name << " n=" << n;
    }
  }
}
