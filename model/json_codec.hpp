#pragma once
// Internal to model/: how the report's types map to JSON. Every struct is one
// INTERPROBE_JSON line in json_codecs.cpp (nlohmann's field-list macros: a missing key keeps the
// struct's default; the schema check before decoding has already refused missing required keys);
// enums go through their vocabulary table; std::optional is null when empty.
#include <optional>

#include <nlohmann/json.hpp>

#include "model/report.hpp"

#ifndef JSON_DIAGNOSTICS
#error "model/ is built with JSON_DIAGNOSTICS=1 (see CMakeLists.txt): decode errors name the key path"
#endif

namespace nlohmann {
template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v) j = *v;
    else j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null()) v.reset();
    else v = j.get<T>();
  }
};
}  // namespace nlohmann

namespace interprobe::report {

using json = nlohmann::json;

template <NamedEnum E>
void to_json(json& j, E e) {
  j = to_string(e);
}
template <NamedEnum E>
void from_json(const json& j, E& e) {
  auto parsed = j.is_string() ? parse_enum<E>(j.get_ref<const std::string&>()) : std::nullopt;
  if (!parsed) throw json::type_error::create(302, "'" + j.dump() + "' is not one of " + enum_choices<E>(), &j);
  e = *parsed;
}

void to_json(json& j, const Value& v);
void from_json(const json& j, Value& v);

// The whole report (json_codecs.cpp holds every struct's codec; these are its entry points).
json report_to_json(const Report& report);
Report report_from_json(const json& j);

}  // namespace interprobe::report

#define INTERPROBE_JSON(Type, ...) NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Type, __VA_ARGS__)
