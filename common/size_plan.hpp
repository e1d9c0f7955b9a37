#pragma once
// Which message sizes a sweep visits (bandwidth and all-reduce alike): a geometric range
// (--min --max --factor) or a list (--sizes). Sizes accept binary K/M/G suffixes.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace interprobe {

// The most sizes one sweep plans (factor 2 from 1 B to 1 TiB is 41; factor 1.1 about 300).
inline constexpr std::size_t kMaxPlannedSizes = 1000;

// min, then each size times factor (rounded down, always growing), up to max; max itself is
// always the last size, because the size a user asks for is the one they want measured.
// Throws InputError naming the option: --min 0, --max below --min, --factor not in (1, 1024],
// more than kMaxPlannedSizes sizes.
std::vector<std::uint64_t> geometric_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor);

// "4,64K,1M" -> sorted, duplicates removed; every entry parsed by parse_size_bytes. An empty
// entry ("8,,16"), 0 or an unknown suffix is an InputError naming `option`.
std::vector<std::uint64_t> parse_size_list(std::string_view text, std::string_view option = "--sizes");

// A planned sweep cut at `max_bytes` (0: unchanged): the sizes at or below it, and `max_bytes`
// itself last when the plan went past it. A cap below the plan's smallest size is an InputError
// naming `option`.
std::vector<std::uint64_t> sizes_up_to(std::vector<std::uint64_t> sizes, std::uint64_t max_bytes,
                                       std::string_view option = "--max-size");

}  // namespace interprobe
