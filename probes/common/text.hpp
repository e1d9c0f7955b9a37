#pragma once
// Small string helpers for parsing machine files. Machine strings are untrusted: parsers
// return nullopt on anything unexpected instead of throwing.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace interprobe {

std::string_view trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);
// Splits on runs of spaces and tabs.
std::vector<std::string> split_whitespace(std::string_view s);
std::string to_lower(std::string_view s);
bool starts_with_ci(std::string_view s, std::string_view prefix);

std::optional<std::int64_t> parse_int(std::string_view s);
// Accepts an optional 0x prefix.
std::optional<std::uint64_t> parse_hex(std::string_view s);
std::optional<double> parse_double(std::string_view s);
// A kibibyte count as machine files give it ("MemTotal: 131860388 kB") in bytes; nullopt when it
// is negative or the bytes do not fit in 63 bits (a hostile file must not wrap to "0 B").
std::optional<std::int64_t> kib_to_bytes(std::int64_t kib);
// The first word of `text` (e.g. a find_field value "131860388 kB") as kibibytes, in bytes.
std::optional<std::int64_t> parse_kib_as_bytes(std::string_view text);

// "key: value" / "key=value" lookup over lines (e.g. /proc/cpuinfo, os-release); first match.
std::optional<std::string> find_field(std::string_view text, std::string_view key, char sep);

}  // namespace interprobe
