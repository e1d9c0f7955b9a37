#pragma once
// Byte sizes and rates. Sizes on the command line take binary suffixes (K, M, G, T = 2^10...).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace interprobe {

// "4", "64K", "1M", "1G", "2KiB" -> bytes; throws InputError naming `what` on bad input.
std::uint64_t parse_size_bytes(std::string_view text, std::string_view what);
// 1536 -> "1.5 KiB"; exact powers print without decimals ("256 MiB").
std::string format_bytes(std::uint64_t bytes);
// Compact label for tables: 8 -> "8", 65536 -> "64K", 1<<30 -> "1G".
std::string format_size_label(std::uint64_t bytes);
// GB/s with a sensible number of digits.
std::string format_gbps(double gbps);
std::string format_us(double us);
// About three significant digits and never an exponent above 1: "1044", "52.3", "0.0203".
std::string format_significant(double v);
// PCIe generation of a link rate in GT/s (2.5 -> 1 ... 64 -> 6, 128 -> 7). Thresholds halfway-ish
// below each rate, so emulated or rounded rates (15.9, 31.5) still name their generation;
// nullopt below 2 GT/s.
std::optional<int> pcie_generation(double gts);

}  // namespace interprobe
