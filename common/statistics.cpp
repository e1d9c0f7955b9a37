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

}  // namespace interprobe
