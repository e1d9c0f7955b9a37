#pragma once
// A plain typed value for finding evidence: null, bool, integer, number or text.
#include <cstdint>
#include <string>
#include <variant>

namespace interprobe::report {

using Value = std::variant<std::nullptr_t, bool, std::int64_t, double, std::string>;

std::string value_to_text(const Value& v);

}  // namespace interprobe::report
