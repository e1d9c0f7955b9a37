#pragma once
// Summary statistics of timing samples, shared by every sweep (bandwidth, all-reduce, GEMM).
#include <cstddef>
#include <optional>
#include <vector>

namespace interprobe {

struct SampleStats {
  std::size_t samples = 0;
  double min = 0, median = 0, p95 = 0, max = 0, mean = 0;
  double stddev = 0;  // sample standard deviation (n-1)
  double cv = 0;      // stddev / mean; 0 with fewer than two samples
};

// Percentile with linear interpolation between closest ranks (q in [0,1]).
double percentile(std::vector<double> values, double q);
SampleStats summarize(const std::vector<double>& values);

// A distribution-free confidence interval of the median: [x_(k), x_(n+1-k)] of the sorted
// samples, with k the largest rank whose binomial(n, 1/2) tail P(B < k) is at most
// (1 - confidence) / 2. It holds for any continuous distribution of the samples (skewed,
// two-moded timing samples included) and needs no random resampling. `coverage` is what the
// chosen ranks guarantee (>= confidence; 96.9% at n = 6 where it is min..max).
struct MedianInterval {
  double low = 0, high = 0;
  std::size_t low_rank = 0, high_rank = 0;  // 1-based ranks in the sorted samples
  double coverage = 0;
};
// nullopt when no pair of ranks reaches `confidence`: fewer than 6 samples at 95%.
std::optional<MedianInterval> median_interval(std::vector<double> values, double confidence = 0.95);

}  // namespace interprobe
