#include "probes/bandwidth/size_plan.hpp"

#include <algorithm>

namespace interprobe {

std::vector<std::uint64_t> cap_sizes(const std::vector<std::uint64_t>& sizes, std::uint64_t limit_bytes, bool& capped) {
  std::vector<std::uint64_t> kept;
  for (auto s : sizes)
    if (s <= limit_bytes) kept.push_back(s);
  capped = kept.size() != sizes.size();
  if (kept.empty() && limit_bytes > 0 && !sizes.empty()) kept.push_back(limit_bytes);
  return kept;
}

}  // namespace interprobe
