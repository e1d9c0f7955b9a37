#pragma once
// Closed vocabularies: every enum of the report has one table of its JSON names
// (model/vocabulary.cpp). The JSON codec, the renderers and the schema test read the same
// table, so a value's spelling lives in exactly one place.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace interprobe::report {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

// An enum of the report: `names(E{})` finds its table by argument-dependent lookup.
template <class E>
concept NamedEnum = std::is_enum_v<E> && requires(E e) {
  { names(e) } -> std::same_as<std::span<const EnumName<E>>>;
};

#define INTERPROBE_DECLARE_ENUM(E) std::span<const EnumName<E>> names(E)

template <NamedEnum E>
const char* to_string(E e) {
  for (const auto& entry : names(E{}))
    if (entry.value == e) return entry.name;
  return "unknown";  // only a value cast from outside the enum lands here
}

template <NamedEnum E>
std::optional<E> parse_enum(std::string_view text) {
  for (const auto& entry : names(E{}))
    if (text == entry.name) return entry.value;
  return std::nullopt;
}

// "a, b, c": for error messages that list what would have been accepted.
template <NamedEnum E>
std::string enum_choices() {
  std::string out;
  for (const auto& entry : names(E{})) out += (out.empty() ? "" : ", ") + std::string(entry.name);
  return out;
}

}  // namespace interprobe::report
