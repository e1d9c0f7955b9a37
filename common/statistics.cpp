#include "common/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace interprobe {

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  q = std::clamp(q, 0.0, 1.0);
  double pos = q * static_cast<double>(values.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  auto hi = static_cast<std::size_t>(std::ceil(pos));
  double frac = pos - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

SampleStats summarize(const std::vector<double>& values) {
  SampleStats s;
  s.samples = values.size();
  if (values.empty()) return s;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = percentile(sorted, 0.5);
  s.p95 = percentile(sorted, 0.95);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  if (sorted.size() > 1) {
    double acc = 0;
    for (double v : sorted) acc += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(acc / static_cast<double>(sorted.size() - 1));
    s.cv = s.mean > 0 ? s.stddev / s.mean : 0;
  }
  return s;
}

namespace {

// P(B <= k) for B ~ binomial(n, 1/2), summed in log space: 0.5^n underflows near n = 1075.
double binomial_half_cdf(std::size_t n, std::size_t k) {
  double total = 0;
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  for (std::size_t i = 0; i <= k && i <= n; ++i) {
    double log_choose = std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
                        std::lgamma(static_cast<double>(n - i) + 1);
    total += std::exp(log_choose + log_half_n);
  }
  return total;
}

}  // namespace

std::optional<MedianInterval> median_interval(std::vector<double> values, double confidence) {
  const std::size_t n = values.size();
  const double tail = (1 - std::clamp(confidence, 0.0, 1.0)) / 2;
  // Largest k with P(B <= k - 1) <= tail; the interval [x_(k), x_(n+1-k)] misses the median
  // with probability 2 P(B <= k - 1).
  std::size_t k = 0;
  while (k + 1 <= (n + 1) / 2 && binomial_half_cdf(n, k) <= tail) ++k;
  if (k == 0) return std::nullopt;
  std::sort(values.begin(), values.end());
  MedianInterval interval;
  interval.low_rank = k;
  interval.high_rank = n + 1 - k;
  interval.low = values[interval.low_rank - 1];
  interval.high = values[interval.high_rank - 1];
  interval.coverage = 1 - 2 * binomial_half_cdf(n, k - 1);
  return interval;
}

}  // namespace interprobe
