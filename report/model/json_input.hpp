#pragma once
// Internal to report/model: parsing report text someone handed us, bounded in nesting.
#include <string>

#include <nlohmann/json.hpp>

namespace interprobe::report {

// Parses report text into a tree no deeper than kMaxReportDepth containers. Throws
// ReportFormatError naming the key path where it broke (too deep, a number out of range) or
// json::parse_error for broken syntax.
nlohmann::json parse_bounded(const std::string& text);

}  // namespace interprobe::report
