#pragma once
// Summary statistics of timing samples, shared by every sweep (bandwidth, all-reduce, GEMM).
#include <cstddef>
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

}  // namespace interprobe
