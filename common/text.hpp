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

// Untrusted text (machine files, reports, archive entry names, vendor strings) made safe to
// show on a terminal, in a log or in a markdown cell. Printable UTF-8 passes unchanged; each
// byte of anything else becomes a visible \xNN escape: C0 controls and DEL (ESC, BEL, NUL...),
// C1 controls U+0080..U+009F (the one-byte CSI U+009B, OSC U+009D), bidirectional overrides and
// other invisible format characters (U+202E, U+2066, zero-width, BOM), noncharacters (U+FFFE,
// U+FFFF: no XML 1.0 character), and bytes that are not valid UTF-8 (a raw 0x9b too). Every terminal and error path goes through this one function.
struct PrintableOptions {
  bool ascii_only = false;     // escape every byte outside printable ASCII (evidence values)
  bool keep_newlines = false;  // let '\n' and '\t' through (laid-out multi-line text)
  std::size_t max_chars = std::string_view::npos;  // then "..." (an escape counts as one)
};
std::string printable(std::string_view raw, const PrintableOptions& options = {});

// "key: value" / "key=value" lookup over lines (e.g. /proc/cpuinfo, os-release); first match.
std::optional<std::string> find_field(std::string_view text, std::string_view key, char sep);

}  // namespace interprobe
