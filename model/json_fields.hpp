#pragma once
// One way to give a struct its JSON: one INTERPROBE_JSON(Type, member...) line. It defines the
// codec (nlohmann's field-list macro: keys are the member names; a missing key keeps the
// struct's default) and the struct's JSON Schema, derived from the members' declared types:
// bool, integers, floating point, std::string, enums with a vocabulary table (model/vocabulary.hpp),
// std::optional (null when empty), std::vector, std::map<std::string, T> and other described
// structs. The report, the fleet report, telemetry traces and NVML recordings all use it, so a
// member added to a struct is in its codec and its schema at once.
#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/vocabulary.hpp"

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

template <NamedEnum E>
void to_json(nlohmann::json& j, E e) {
  j = to_string(e);
}
template <NamedEnum E>
void from_json(const nlohmann::json& j, E& e) {
  auto parsed = j.is_string() ? parse_enum<E>(j.get_ref<const std::string&>()) : std::nullopt;
  if (!parsed)
    throw nlohmann::json::type_error::create(302, "'" + j.dump() + "' is not one of " + enum_choices<E>(), &j);
  e = *parsed;
}

// --- the schema a declaration implies

// The "$defs" of one schema document: each described struct once, under its snake_case name.
class SchemaDefs {
 public:
  template <class T>
  nlohmann::json ref();
  const nlohmann::json& defs() const { return defs_; }

 private:
  nlohmann::json defs_ = nlohmann::json::object();
};

// One struct's members as they are declared; INTERPROBE_JSON writes the calls.
class SchemaFields {
 public:
  explicit SchemaFields(SchemaDefs& defs) : defs_(defs) {}
  template <class T>
  void add(const char* key);
  // {"type": "object", "required": [every member], "properties": {...}}: a writer writes every
  // member (std::optional as null); a member a later minor version added is taken out of
  // "required" by the document's annotations ("x-since").
  nlohmann::json object() const {
    return {{"type", "object"}, {"required", required_}, {"additionalProperties", false}, {"properties", properties_}};
  }

 private:
  SchemaDefs& defs_;
  nlohmann::json required_ = nlohmann::json::array();
  nlohmann::json properties_ = nlohmann::json::object();
};

template <class T>
concept DescribedStruct = requires(SchemaFields& fields, const T* tag) {
  describe_json_fields(fields, tag);
  { json_type_name(tag) } -> std::convertible_to<const char*>;
};

// A type whose JSON is written by hand (an evidence value) gives its schema the same way.
template <class T>
concept CustomSchema = requires(SchemaDefs& defs, const T* tag) {
  { json_schema(defs, tag) } -> std::same_as<nlohmann::json>;
};

template <class T>
inline constexpr bool is_optional_v = false;
template <class T>
inline constexpr bool is_optional_v<std::optional<T>> = true;
template <class T>
inline constexpr bool is_vector_v = false;
template <class T>
inline constexpr bool is_vector_v<std::vector<T>> = true;
template <class T>
inline constexpr bool is_string_map_v = false;
template <class T>
inline constexpr bool is_string_map_v<std::map<std::string, T>> = true;

inline std::string snake_case(std::string_view camel) {
  std::string out;
  for (std::size_t i = 0; i < camel.size(); ++i) {
    const auto c = static_cast<unsigned char>(camel[i]);
    const bool boundary = i > 0 && std::isupper(c) &&
                          (std::islower(static_cast<unsigned char>(camel[i - 1])) ||
                           (i + 1 < camel.size() && std::islower(static_cast<unsigned char>(camel[i + 1]))));
    if (boundary) out += '_';
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

// null joins what a schema accepts: to its type list, its enum, or beside its $ref.
inline nlohmann::json nullable(nlohmann::json schema) {
  if (auto type = schema.find("type"); type != schema.end() && type->is_string()) {
    *type = nlohmann::json::array({*type, "null"});
    return schema;
  }
  if (auto values = schema.find("enum"); values != schema.end()) {
    values->push_back(nullptr);
    return schema;
  }
  return {{"anyOf", nlohmann::json::array({schema, {{"type", "null"}}})}};
}

template <class T>
nlohmann::json schema_of(SchemaDefs& defs) {
  if constexpr (is_optional_v<T>) {
    return nullable(schema_of<typename T::value_type>(defs));
  } else if constexpr (is_vector_v<T>) {
    return {{"type", "array"}, {"items", schema_of<typename T::value_type>(defs)}};
  } else if constexpr (is_string_map_v<T>) {
    return {{"type", "object"}, {"additionalProperties", schema_of<typename T::mapped_type>(defs)}};
  } else if constexpr (std::is_same_v<T, bool>) {
    return {{"type", "boolean"}};
  } else if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_unsigned_v<T>) return {{"type", "integer"}, {"minimum", 0}};
    else return {{"type", "integer"}};
  } else if constexpr (std::is_floating_point_v<T>) {
    return {{"type", "number"}};
  } else if constexpr (std::is_same_v<T, std::string>) {
    return {{"type", "string"}};
  } else if constexpr (NamedEnum<T>) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto& entry : names(T{})) values.push_back(entry.name);
    return {{"enum", std::move(values)}};
  } else if constexpr (CustomSchema<T>) {
    return json_schema(defs, static_cast<const T*>(nullptr));
  } else {
    static_assert(DescribedStruct<T>, "a member's type has no schema: give its struct an INTERPROBE_JSON line");
    return defs.template ref<T>();
  }
}

template <class T>
nlohmann::json SchemaDefs::ref() {
  const std::string name = snake_case(json_type_name(static_cast<const T*>(nullptr)));
  if (!defs_.contains(name)) {
    defs_[name] = nullptr;  // taken before the members are walked: a struct that holds itself
    SchemaFields fields(*this);
    describe_json_fields(fields, static_cast<const T*>(nullptr));
    defs_[name] = fields.object();
  }
  return {{"$ref", "#/$defs/" + name}};
}

// A whole file's schema: T's object at the top, every struct it holds under "$defs".
template <class T>
nlohmann::json schema_document() {
  SchemaDefs defs;
  SchemaFields top(defs);
  describe_json_fields(top, static_cast<const T*>(nullptr));
  nlohmann::json schema = top.object();
  schema["$defs"] = defs.defs();
  return schema;
}

template <class T>
void SchemaFields::add(const char* key) {
  properties_[key] = schema_of<T>(defs_);
  required_.push_back(key);
}

// A file's reader checks its text against the schema its declarations give before decoding
// (model/schema_check.hpp: schema_violation): nlohmann's decoding turns `true` or 1.5 into an
// integer member and keeps a struct's default for a missing key.

}  // namespace interprobe::report

#define INTERPROBE_JSON_SCHEMA_FIELD(member) fields.add<decltype(Self::member)>(#member);

// The codec (nlohmann's field-list macro's body: keys are the member names; a missing key keeps
// the struct's default) and the schema description, `linkage` inline or not.
#define INTERPROBE_JSON_FUNCTIONS(linkage, Type, ...)                                                  \
  linkage void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {                  \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                            \
  }                                                                                                     \
  linkage void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {                \
    const Type nlohmann_json_default_obj{};                                                             \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_FROM_WITH_DEFAULT, __VA_ARGS__))             \
  }                                                                                                     \
  linkage const char* json_type_name(const Type*) { return #Type; }                                     \
  linkage void describe_json_fields(::interprobe::report::SchemaFields& fields, const Type*) {          \
    using Self = Type;                                                                                  \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(INTERPROBE_JSON_SCHEMA_FIELD, __VA_ARGS__))                \
  }

// In the struct's namespace: INTERPROBE_JSON(BandwidthPoint, bytes, samples, ...).
#define INTERPROBE_JSON(Type, ...) INTERPROBE_JSON_FUNCTIONS(inline, Type, __VA_ARGS__)
// The same, defined once for a struct whose header has INTERPROBE_JSON_DECLARE(Type)
// (model/json_declare.hpp): a section's structs in a .cpp of their own.
#define INTERPROBE_JSON_DEFINE(Type, ...) INTERPROBE_JSON_FUNCTIONS(, Type, __VA_ARGS__)
