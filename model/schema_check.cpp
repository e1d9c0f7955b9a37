#include "model/schema_check.hpp"

#include <fmt/format.h>

namespace interprobe::report {

namespace {

using json = nlohmann::json;

const json& report_schema_root() {
  static const json root = report_schema();
  return root;
}

std::string describe(const json& v) { return v.is_number() || v.is_boolean() ? v.dump() : v.type_name(); }

std::string join_path(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

class Walker {
 public:
  // `root` holds the "$defs" a "$ref" names.
  Walker(const json& root, RequiredKeys required) : root_(root), required_(required) {}

  // Empty when `node` conforms, else the first violation.
  std::string check(const json& node, const json& schema, const std::string& path) const {
    if (!schema.is_object()) return {};
    if (auto ref = schema.find("$ref"); ref != schema.end()) {
      if (auto error = check(node, resolve(ref->get<std::string>()), path); !error.empty()) return error;
    }
    if (auto error = check_type(node, schema, path); !error.empty()) return error;
    if (auto error = check_value(node, schema, path); !error.empty()) return error;
    for (const char* any : {"oneOf", "anyOf"})
      if (auto options = schema.find(any); options != schema.end()) {
        std::string first_error;
        bool matched = false;
        for (const auto& option : *options) {
          auto error = check(node, option, path);
          if (error.empty()) matched = true;
          else if (first_error.empty()) first_error = error;
          if (matched) break;
        }
        if (!matched) return first_error;
      }
    if (node.is_object()) return check_object(node, schema, path);
    if (node.is_array()) return check_array(node, schema, path);
    return {};
  }

 private:
  const json& resolve(const std::string& ref) const {
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) != 0) throw std::logic_error("schema: unsupported $ref " + ref);
    return root_.at("$defs").at(ref.substr(prefix.size()));
  }

  static bool is_type(const json& v, const std::string& type) {
    if (type == "integer") return v.is_number_integer();  // includes unsigned: range checked below
    if (type == "number") return v.is_number();
    return v.type_name() == type || (type == "boolean" && v.is_boolean());
  }

  static std::string at(const std::string& path) { return path.empty() ? "(top level)" : path; }

  static std::string check_type(const json& v, const json& schema, const std::string& path) {
    auto type = schema.find("type");
    if (type == schema.end()) return {};
    std::vector<std::string> allowed;
    if (type->is_string()) allowed.push_back(type->get<std::string>());
    else
      for (const auto& t : *type) allowed.push_back(t.get<std::string>());
    bool wants_integer = std::find(allowed.begin(), allowed.end(), "integer") != allowed.end();
    if (wants_integer && v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      return fmt::format("{}: {} is out of range (-9223372036854775808 to 9223372036854775807)", at(path), v.dump());
    for (const auto& t : allowed)
      if (is_type(v, t)) return {};
    std::string wanted = allowed.size() == 1 ? allowed[0] : fmt::format("{}", fmt::join(allowed, " or "));
    if (wanted == "integer" || wanted == "object" || wanted == "array") wanted = "an " + wanted;
    else if (allowed.size() == 1) wanted = "a " + wanted;
    return fmt::format("{}: expected {}, found {}", at(path), wanted, describe(v));
  }

  static std::string check_value(const json& v, const json& schema, const std::string& path) {
    // An open vocabulary (finding ids): the schema lists what this version writes, a reader
    // accepts what a newer minor version may add.
    bool open_on_read = schema.value("x-open-on-read", false);
    if (auto values = schema.find("enum"); values != schema.end() && !open_on_read) {
      if (std::find(values->begin(), values->end(), v) == values->end()) {
        std::vector<std::string> names;
        for (const auto& value : *values) names.push_back(value.dump());
        return fmt::format("{}: {} is not one of {}", at(path), v.dump(), fmt::join(names, ", "));
      }
    }
    if (auto value = schema.find("const"); value != schema.end() && *value != v)
      return fmt::format("{}: {} must be {}", at(path), v.dump(), value->dump());
    if (v.is_number()) {
      double x = v.get<double>();
      if (auto min = schema.find("minimum"); min != schema.end() && x < min->get<double>())
        return fmt::format("{}: {} is below the minimum {}", at(path), v.dump(), min->dump());
      if (auto min = schema.find("exclusiveMinimum"); min != schema.end() && x <= min->get<double>())
        return fmt::format("{}: {} must be above {}", at(path), v.dump(), min->dump());
      if (auto max = schema.find("maximum"); max != schema.end() && x > max->get<double>())
        return fmt::format("{}: {} is above the maximum {}", at(path), v.dump(), max->dump());
    }
    return {};
  }

  std::string check_object(const json& v, const json& schema, const std::string& path) const {
    if (auto required = schema.find("required"); required != schema.end() && required_ == RequiredKeys::checked)
      for (const auto& key : *required)
        if (!v.contains(key.get<std::string>()))
          return fmt::format("{}: missing required key '{}'", at(path), key.get<std::string>());
    auto properties = schema.find("properties");
    auto additional = schema.find("additionalProperties");
    for (auto it = v.begin(); it != v.end(); ++it) {
      const json* sub = nullptr;
      if (properties != schema.end() && properties->contains(it.key())) sub = &(*properties)[it.key()];
      else if (additional != schema.end() && additional->is_object()) sub = &*additional;
      if (!sub) continue;
      if (auto error = check(it.value(), *sub, join_path(path, it.key())); !error.empty()) return error;
    }
    return {};
  }

  std::string check_array(const json& v, const json& schema, const std::string& path) const {
    auto items = schema.find("items");
    if (items == schema.end()) return {};
    for (std::size_t i = 0; i < v.size(); ++i)
      if (auto error = check(v[i], *items, path + "[" + std::to_string(i) + "]"); !error.empty()) return error;
    return {};
  }

  const json& root_;
  RequiredKeys required_;
};

}  // namespace

std::string schema_violation(const json& value, const json& schema, RequiredKeys required) {
  return Walker(schema, required).check(value, schema, "");
}

void check_against_schema(const json& report, RequiredKeys required) {
  if (auto error = schema_violation(report, report_schema_root(), required); !error.empty()) throw ReportFormatError(error);
}

}  // namespace interprobe::report
