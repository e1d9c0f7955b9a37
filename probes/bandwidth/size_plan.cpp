#include "probes/bandwidth/size_plan.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "probes/common/errors.hpp"
#include "probes/common/text.hpp"
#include "probes/common/units.hpp"

namespace interprobe {

std::vector<std::uint64_t> geometric_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor) {
  if (min_bytes < 1) throw InputError("--min: must be at least 1 byte; give e.g. --min 4");
  if (max_bytes < min_bytes)
    throw InputError(fmt::format("--max: {} is below --min {}; give a --max at or above --min", format_bytes(max_bytes),
                                 format_bytes(min_bytes)));
  if (!(factor > 1.0) || !std::isfinite(factor) || factor > 1024)
    throw InputError(fmt::format("--factor: {} must be above 1 and at most 1024 (e.g. 2)", factor));
  std::vector<std::uint64_t> sizes;
  double size = static_cast<double>(min_bytes);
  while (size <= static_cast<double>(max_bytes)) {
    auto rounded = static_cast<std::uint64_t>(std::llround(size));
    if (sizes.empty() || rounded > sizes.back()) sizes.push_back(rounded);
    size *= factor;
  }
  if (sizes.back() < max_bytes) sizes.push_back(max_bytes);
  return sizes;
}

std::vector<std::uint64_t> parse_size_list(std::string_view text, std::string_view what) {
  std::vector<std::uint64_t> sizes;
  for (const auto& item : split(std::string(text), ',')) {
    if (trim(item).empty()) continue;
    std::uint64_t bytes = parse_size_bytes(item, what);
    if (bytes < 1) throw InputError(fmt::format("{}: sizes must be at least 1 byte, got '{}'", what, item));
    sizes.push_back(bytes);
  }
  if (sizes.empty()) throw InputError(fmt::format("{}: give at least one size, e.g. 4,64K,1M", what));
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::vector<std::uint64_t> cap_sizes(const std::vector<std::uint64_t>& sizes, std::uint64_t limit_bytes, bool& capped) {
  std::vector<std::uint64_t> kept;
  for (auto s : sizes)
    if (s <= limit_bytes) kept.push_back(s);
  capped = kept.size() != sizes.size();
  if (kept.empty() && limit_bytes > 0 && !sizes.empty()) kept.push_back(limit_bytes);
  return kept;
}

}  // namespace interprobe
