#pragma once
// Which sizes a sweep visits: a geometric range (--min --max --factor) or a list (--sizes).
#include <cstdint>
#include <string_view>
#include <vector>

namespace interprobe {

// min, min*factor, ... up to max; max itself is always the last size. Throws InputError naming
// the option: --min below 1 byte, --max below --min, --factor not above 1.
std::vector<std::uint64_t> geometric_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor);

// "4,64K,1M" -> sorted, duplicates removed; every entry parsed by parse_size_bytes.
std::vector<std::uint64_t> parse_size_list(std::string_view text, std::string_view what);

// Sizes at or below `limit_bytes`; `capped` tells whether any were dropped. When every size is
// above the limit the limit itself is kept, so a capped sweep still measures something.
std::vector<std::uint64_t> cap_sizes(const std::vector<std::uint64_t>& sizes, std::uint64_t limit_bytes, bool& capped);

}  // namespace interprobe
