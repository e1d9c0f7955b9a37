#pragma once
// Reading and writing reports as JSON. A saved report is a first-class input: every command
// after probing works from it.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "model/report.hpp"

namespace interprobe::report {

// What a report given to `interprobe report` (or compare/check) may be: at most this many bytes,
// read from a regular file or a pipe, and containers nested at most this deep.
inline constexpr std::size_t kMaxReportBytes = std::size_t{64} << 20;
inline constexpr int kMaxReportDepth = 64;  // kMaxJsonDepth: common/json_input parses every input

std::string to_json_text(const Report& report, int indent = 2);
// Throws InputError naming `label` and where it broke (byte offset or key path): broken syntax,
// nesting beyond kMaxReportDepth, wrong types, numbers out of their field's range.
Report parse_report_text(const std::string& text, const std::string& label);
Report read_report_file(const std::filesystem::path& path);
// The major of the `schema_version` the text was written with (before any upgrade); nullopt when
// the text is no JSON object with a "N.M..." version (parse_report_text then says what is wrong).
std::optional<int> written_schema_major(const std::string& text);
// Temp file beside it + fsync + rename (common/output_file.hpp): a reader never sees half a report.
void write_report_file(const std::filesystem::path& path, const Report& report);

// The collective section alone, as the report writes it (the fleet report's cross-node all-reduce).
// Reading throws nlohmann::json::exception on a wrong shape.
nlohmann::json collective_section_to_json(const CollectiveSection& section);
CollectiveSection collective_section_from_json(const nlohmann::json& j);

}  // namespace interprobe::report
