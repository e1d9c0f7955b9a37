#include "common/size_plan.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/text.hpp"
#include "common/units.hpp"

namespace interprobe {

std::vector<std::uint64_t> geometric_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor) {
  if (min_bytes < 1) throw InputError("--min 0: sizes must be at least 1 byte; give e.g. --min 8");
  if (max_bytes < min_bytes)
    throw InputError(fmt::format("--max {} is below --min {}; give a --max at or above --min", format_bytes(max_bytes),
                                 format_bytes(min_bytes)));
  if (!(factor > 1.0) || !std::isfinite(factor) || factor > 1024)
    throw InputError(fmt::format("--factor {}: must be above 1 and at most 1024 (sizes grow by it), e.g. --factor 2", factor));
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = min_bytes; size < max_bytes;) {
    if (sizes.size() + 1 >= kMaxPlannedSizes)  // +1: max itself comes last
      throw InputError(fmt::format("--min {} --max {} --factor {}: more than {} sizes to measure; give a larger --factor "
                                   "or a narrower --min/--max range",
                                   format_bytes(min_bytes), format_bytes(max_bytes), factor, kMaxPlannedSizes));
    sizes.push_back(size);
    const double next = std::floor(static_cast<double>(size) * factor);
    if (next >= static_cast<double>(max_bytes)) break;
    size = std::max(size + 1, static_cast<std::uint64_t>(next));
  }
  sizes.push_back(max_bytes);
  return sizes;
}

std::vector<std::uint64_t> parse_size_list(std::string_view text, std::string_view option) {
  std::vector<std::uint64_t> sizes;
  for (const auto& item : split(text, ',')) {
    auto entry = trim(item);
    if (entry.empty())
      throw InputError(fmt::format("{} '{}': empty entry; give sizes separated by commas, e.g. 8,64K,1M", option, std::string(text)));
    std::uint64_t bytes = parse_size_bytes(entry, option);
    if (bytes < 1) throw InputError(fmt::format("{}: '{}' is not a size; sizes must be at least 1 byte", option, std::string(entry)));
    if (sizes.size() >= kMaxPlannedSizes)
      throw InputError(fmt::format("{}: more than {} sizes; give fewer", option, kMaxPlannedSizes));
    sizes.push_back(bytes);
  }
  if (sizes.empty()) throw InputError(fmt::format("{}: give at least one size, e.g. 8,64K,1M", option));
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::vector<std::uint64_t> sizes_up_to(std::vector<std::uint64_t> sizes, std::uint64_t max_bytes, std::string_view option) {
  if (max_bytes == 0 || sizes.empty() || sizes.back() <= max_bytes) return sizes;
  if (max_bytes < sizes.front())
    throw InputError(fmt::format("{} {} is below the smallest size of the sweep ({}); give at least {}", option,
                                 format_bytes(max_bytes), format_bytes(sizes.front()), format_bytes(sizes.front())));
  std::erase_if(sizes, [max_bytes](std::uint64_t size) { return size > max_bytes; });
  if (sizes.back() != max_bytes) sizes.push_back(max_bytes);
  return sizes;
}

}  // namespace interprobe
