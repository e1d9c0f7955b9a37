#include "model/schema_check.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/json_input.hpp"

namespace interprobe::report {

namespace {

using json = nlohmann::json;

const json& report_schema_root() {
  static const json root = report_schema();
  return root;
}

// Text from the file in a message: escaped for a terminal and cut short (common/json_input.hpp);
// a list or object by its kind.
std::string shown(const json& v) { return v.is_structured() ? std::string(v.type_name()) : json_excerpt(v); }

struct Violation {
  std::string path;  // below the value checked: "samples[3].gpu"; empty for the value itself
  std::string what;
};

// Paths and messages are built only for the violation found: a trace holds millions of values.
std::optional<Violation> under(const std::string& step, std::optional<Violation> found) {
  if (found) found->path = step + (found->path.empty() || found->path[0] == '[' ? "" : ".") + found->path;
  return found;
}

bool has_type(const json& v, const std::string& type) {
  if (type == "integer") return v.is_number_integer();  // includes unsigned: range checked below
  if (type == "number") return v.is_number();
  return v.type_name() == type;
}

std::optional<Violation> type_violation(const json& v, const json& rule) {
  bool integer = false, matched = false;
  const auto consider = [&](const json& t) {  // no copies: this runs for every value of a trace
    const auto& name = t.get_ref<const std::string&>();
    integer |= name == "integer";
    matched |= has_type(v, name);
  };
  if (rule.is_array())
    for (const auto& t : rule) consider(t);
  else
    consider(rule);
  if (integer && v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    return Violation{"", fmt::format("{} is out of range (-9223372036854775808 to 9223372036854775807)", v.dump())};
  if (matched) return std::nullopt;
  std::vector<std::string> names;
  for (const auto& t : rule.is_array() ? rule : json::array({rule})) names.push_back(t.get<std::string>());
  std::string wanted = fmt::format("{}", fmt::join(names, " or "));
  if (names.size() == 1) wanted = (wanted == "integer" || wanted == "object" || wanted == "array" ? "an " : "a ") + wanted;
  return Violation{"", fmt::format("expected {}, found {}", wanted, v.is_number() || v.is_boolean() ? v.dump() : v.type_name())};
}

std::optional<Violation> bound_violation(const json& v, const std::string& keyword, const json& rule) {
  if (!v.is_number()) return std::nullopt;
  const double x = v.get<double>(), bound = rule.get<double>();
  if (keyword == "minimum" && x < bound) return Violation{"", fmt::format("{} is below the minimum {}", v.dump(), rule.dump())};
  if (keyword == "exclusiveMinimum" && x <= bound) return Violation{"", fmt::format("{} must be above {}", v.dump(), rule.dump())};
  if (keyword == "maximum" && x > bound) return Violation{"", fmt::format("{} is above the maximum {}", v.dump(), rule.dump())};
  return std::nullopt;
}

class Checker {
 public:
  // `root` holds the "$defs" a "$ref" names.
  Checker(const json& root, RequiredKeys required) : root_(root), required_(required) {}

  // One pass over the schema's keywords (a number's schema has two or three), not a lookup of
  // each: this runs for every value of a trace.
  std::optional<Violation> check(const json& v, const json& schema) const {
    if (!schema.is_object()) return std::nullopt;
    for (const auto& [keyword, rule] : schema.items()) {
      std::optional<Violation> found;
      if (keyword == "type") found = type_violation(v, rule);
      else if (keyword == "minimum" || keyword == "exclusiveMinimum" || keyword == "maximum") found = bound_violation(v, keyword, rule);
      else if (keyword == "properties" || (keyword == "additionalProperties" && !schema.contains("properties")))
        found = check_members(v, schema);
      else if (keyword == "required") found = check_required(v, rule);
      else if (keyword == "items" && v.is_array())
        for (std::size_t i = 0; i < v.size() && !found; ++i) found = under("[" + std::to_string(i) + "]", check(v[i], rule));
      else if (keyword == "$ref") found = check(v, resolve(rule.get_ref<const std::string&>()));
      else if (keyword == "enum" && !schema.value("x-open-on-read", false)) found = check_enum(v, rule);
      else if (keyword == "const" && v != rule) found = Violation{"", fmt::format("{} must be {}", shown(v), rule.dump())};
      else if (keyword == "anyOf" || keyword == "oneOf") found = check_any(v, rule);
      if (found) return found;
    }
    return std::nullopt;
  }

 private:
  const json& resolve(const std::string& ref) const {
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) != 0) throw std::logic_error("schema: unsupported $ref " + ref);
    return root_.at("$defs").at(ref.substr(prefix.size()));
  }

  // The value's own keys (a sample holds few), each against its property, else against
  // additionalProperties when that is a schema (`false` is not enforced: a newer minor version's
  // extra keys are accepted).
  std::optional<Violation> check_members(const json& v, const json& schema) const {
    if (!v.is_object()) return std::nullopt;
    const auto properties = schema.find("properties");
    const auto additional = schema.find("additionalProperties");
    for (auto it = v.begin(); it != v.end(); ++it) {
      const json* sub = nullptr;
      if (properties != schema.end())
        if (auto member = properties->find(it.key()); member != properties->end()) sub = &*member;
      if (!sub && additional != schema.end() && additional->is_object()) sub = &*additional;
      if (sub)
        if (auto found = under(it.key(), check(*it, *sub))) return found;
    }
    return std::nullopt;
  }

  std::optional<Violation> check_required(const json& v, const json& keys) const {
    if (!v.is_object() || required_ == RequiredKeys::lenient) return std::nullopt;
    for (const auto& key : keys)
      if (!v.contains(key.get_ref<const std::string&>()))
        return Violation{"", fmt::format("missing required key '{}'", key.get_ref<const std::string&>())};
    return std::nullopt;
  }

  static std::optional<Violation> check_enum(const json& v, const json& values) {
    if (std::find(values.begin(), values.end(), v) != values.end()) return std::nullopt;
    std::vector<std::string> names;
    for (const auto& value : values) names.push_back(value.dump());
    return Violation{"", fmt::format("{} is not one of {}", shown(v), fmt::join(names, ", "))};
  }

  // Any of the options; when none holds, what the first one says.
  std::optional<Violation> check_any(const json& v, const json& options) const {
    std::optional<Violation> first;
    for (const auto& option : options) {
      auto found = check(v, option);
      if (!found) return std::nullopt;
      if (!first) first = std::move(found);
    }
    return first;
  }

  const json& root_;
  RequiredKeys required_;
};

}  // namespace

std::string schema_violation(const json& value, const json& schema, RequiredKeys required) {
  auto found = Checker(schema, required).check(value, schema);
  if (!found) return {};
  return (found->path.empty() ? "(top level)" : found->path) + ": " + found->what;
}

void check_against_schema(const json& report, RequiredKeys required) {
  if (auto error = schema_violation(report, report_schema_root(), required); !error.empty()) throw ReportFormatError(error);
}

}  // namespace interprobe::report
