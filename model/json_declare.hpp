#pragma once
// A struct whose JSON is defined in a .cpp of its own (INTERPROBE_JSON_DEFINE, model/json_fields.hpp)
// declares it in its header with INTERPROBE_JSON_DECLARE(Type): the codec and the schema
// description, so the report's codec and schema reach it without including its definition.
// Light on purpose (nlohmann's forward declarations only): every model header may include it.
#include <nlohmann/json_fwd.hpp>

namespace interprobe::report {
class SchemaFields;
}  // namespace interprobe::report

// In the struct's namespace, after the struct.
#define INTERPROBE_JSON_DECLARE(Type)                                         \
  void to_json(nlohmann::json& j, const Type& value);                        \
  void from_json(const nlohmann::json& j, Type& value);                      \
  const char* json_type_name(const Type*);                                    \
  void describe_json_fields(::interprobe::report::SchemaFields& fields, const Type*);
