#pragma once
// Path globs for policy items: "*" matches within one segment (no '/'), "**" across segments.
// What each wildcard matched is kept, so a relative threshold can name the matching row of
// another metric ("bandwidth/p2p_truth/{1}/staged_gbps").
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace interprobe::policy {

// The section a selector or metric path names: its first segment ("bandwidth" of "bandwidth/**").
inline std::string first_segment(std::string_view path) { return std::string(path.substr(0, path.find('/'))); }

// The captures of each wildcard, in order; nullopt when `path` does not match.
std::optional<std::vector<std::string>> match_glob(std::string_view pattern, std::string_view path);
bool is_glob(std::string_view pattern);
std::size_t wildcard_count(std::string_view pattern);
// Replaces {N} (1-based) with captures[N-1]; throws std::out_of_range for a missing capture.
std::string substitute_captures(const std::string& templ, const std::vector<std::string>& captures);

}  // namespace interprobe::policy
