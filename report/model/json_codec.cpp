#include "report/model/json_codec.hpp"

#include <fmt/format.h>

namespace interprobe::report::codec {

void In::fail(const std::string& what) const { throw ReportFormatError((path_.empty() ? "(top level)" : path_) + ": " + what); }

void In::check_integer(const json& v, const std::string& path, std::int64_t min, std::uint64_t max) {
  bool fits = false;
  if (v.is_number_unsigned()) fits = v.get<std::uint64_t>() <= max;
  else if (v.is_number_integer()) fits = v.get<std::int64_t>() >= min && (v.get<std::int64_t>() < 0 || static_cast<std::uint64_t>(v.get<std::int64_t>()) <= max);
  else In(v, path).fail(std::string("expected an integer, found ") + (v.is_number() ? v.dump() : v.type_name()));
  if (!fits) In(v, path).fail(fmt::format("{} is out of range ({} to {})", v.dump(), min, max));
}

In In::child(const char* key) const {
  if (!node_->is_object() || !node_->contains(key)) fail(std::string("missing required key '") + key + "'");
  const json& v = (*node_)[key];
  In out(v, child_path(key));
  if (!v.is_object()) out.fail(std::string("expected an object, found ") + v.type_name());
  return out;
}

std::optional<In> In::opt_child(const char* key) const {
  if (!has(key)) return std::nullopt;
  return child(key);
}

std::vector<In> In::array(const char* key) const {
  if (!node_->is_object() || !node_->contains(key)) fail(std::string("missing required key '") + key + "'");
  return opt_array(key);
}

std::vector<In> In::opt_array(const char* key) const {
  std::vector<In> out;
  if (!has(key)) return out;
  const json& v = (*node_)[key];
  if (!v.is_array()) In(v, child_path(key)).fail(std::string("expected an array, found ") + v.type_name());
  for (std::size_t i = 0; i < v.size(); ++i) out.emplace_back(v[i], child_path(key) + "[" + std::to_string(i) + "]");
  return out;
}

std::vector<std::pair<std::string, In>> In::opt_members(const char* key) const {
  std::vector<std::pair<std::string, In>> out;
  if (!has(key)) return out;
  const json& v = (*node_)[key];
  if (!v.is_object()) In(v, child_path(key)).fail(std::string("expected an object, found ") + v.type_name());
  for (auto it = v.begin(); it != v.end(); ++it) out.emplace_back(it.key(), In(it.value(), child_path(key) + "." + it.key()));
  return out;
}

}  // namespace interprobe::report::codec
