#pragma once
// A plain typed value for finding evidence: null, bool, integer, number, text, or a list of them
// (the devices a grouped finding affects, the sizes a sweep found slow).
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace interprobe::report {

struct Value;
using ValueList = std::vector<Value>;

struct Value : std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, ValueList> {
  using variant::variant;
  Value() : variant(nullptr) {}
};

// "1.5", "a, b, c" for a list.
std::string value_to_text(const Value& v);

}  // namespace interprobe::report
