#pragma once
// Internal to model/: how the report's types map to JSON. Every struct is one
// INTERPROBE_JSON line in json_codecs.cpp (nlohmann's field-list macros: a missing key keeps the
// struct's default; the schema check before decoding has already refused missing required keys);
// enums go through their vocabulary table; std::optional is null when empty.
#include "model/json_fields.hpp"
#include "model/report.hpp"

#ifndef JSON_DIAGNOSTICS
#error "model/ is built with JSON_DIAGNOSTICS=1 (see CMakeLists.txt): decode errors name the key path"
#endif

namespace interprobe::report {

using json = nlohmann::json;

void to_json(json& j, const Value& v);
void from_json(const json& j, Value& v);
// Null, a boolean, a number, a string, or a list of them.
json json_schema(SchemaDefs& defs, const Value*);

// The whole report (json_codecs.cpp holds every struct's codec; these are its entry points).
json report_to_json(const Report& report);
Report report_from_json(const json& j);

// The report's schema as the INTERPROBE_JSON declarations give it, before report_schema.cpp's
// annotations.
json generated_report_schema();

}  // namespace interprobe::report

