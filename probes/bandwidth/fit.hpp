#pragma once
// Latency-bandwidth (Hockney) model of a copy: time = t0 + bytes / bandwidth.
#include <cstdint>
#include <optional>
#include <vector>

#include "model/bandwidth.hpp"

namespace interprobe {

struct TimedSize {
  double bytes = 0;    // bytes the copy moved (both directions for bidirectional paths)
  double time_us = 0;  // median time of one copy
};

// Bandwidth comes from a least-squares line through absolute times, which the largest sizes
// dominate (asymptotic bandwidth, what "peak" means for a link); points far off the line are
// down-weighted (Tukey's biweight on relative residuals; more than 50% off counts as another
// regime, e.g. host copies served from a cache) so one disturbed size cannot swing it. t0 comes
// from the relative-error weighted mean of time - bytes / bandwidth, which the smallest sizes
// dominate. residual and points cover the sizes the line follows. Needs two distinct sizes
// and a positive slope; nullopt otherwise.
std::optional<report::BandwidthFit> fit_latency_bandwidth(const std::vector<TimedSize>& points);

}  // namespace interprobe
