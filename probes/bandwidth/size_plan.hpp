#pragma once
// Bandwidth sweeps' sizes: the plan (common/size_plan) capped to what memory allows.
#include <cstdint>
#include <vector>

#include "common/size_plan.hpp"

namespace interprobe {

// Sizes at or below `limit_bytes`; `capped` tells whether any were dropped. When every size is
// above the limit the limit itself is kept, so a capped sweep still measures something.
std::vector<std::uint64_t> cap_sizes(const std::vector<std::uint64_t>& sizes, std::uint64_t limit_bytes, bool& capped);

}  // namespace interprobe
