#pragma once
// Whether the host buffers of a sweep got the same page backing, from what the sweep recorded:
// shared by the probe (a note on the sweep) and the analysis (an info finding).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "model/bandwidth.hpp"

namespace interprobe::report {

// Buffers below 2 MiB cannot hold a huge page; they say nothing about the backing.
inline constexpr std::int64_t kHugePageBytes = 2 << 20;

// Fraction of a buffer in huge pages; nullopt when unknown or too small to tell.
inline std::optional<double> huge_page_fraction(const BandwidthBuffer& b) {
  if (!b.huge_page_bytes || b.bytes < kHugePageBytes) return std::nullopt;
  return std::clamp(static_cast<double>(*b.huge_page_bytes) / static_cast<double>(b.bytes), 0.0, 1.0);
}

// "src 63%, dst 0% in 2 MiB pages" when the buffers are neither all (>= 90%) nor none (<= 10%)
// in huge pages: then sizes of one sweep (or its source and destination) ran with different
// TLB costs. nullopt when the backing is uniform or unknown.
inline std::optional<std::string> mixed_page_backing(const BandwidthSweep& s) {
  std::string parts;
  bool all_huge = true, none_huge = true, known = false;
  for (const auto& b : s.buffers) {
    auto f = huge_page_fraction(b);
    if (!f) continue;
    known = true;
    all_huge = all_huge && *f >= 0.9;
    none_huge = none_huge && *f <= 0.1;
    parts += fmt::format("{}{} {:.0f}%", parts.empty() ? "" : ", ", to_string(b.role), 100 * *f);
  }
  if (!known || all_huge || none_huge) return std::nullopt;
  return parts + " in 2 MiB pages";
}

}  // namespace interprobe::report
