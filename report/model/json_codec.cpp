#include "report/model/json_codec.hpp"

namespace interprobe::report::codec {

void In::fail(const std::string& what) const { throw ReportFormatError((path_.empty() ? "(top level)" : path_) + ": " + what); }

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

}  // namespace interprobe::report::codec
