#include "model/report.hpp"

#include <fmt/format.h>

namespace interprobe::report {

const ProbeRecord* Report::probe(const std::string& name) const {
  for (const auto& p : probes)
    if (p.name == name) return &p;
  return nullptr;
}

const char* version_read_from_file(const LibraryInfo& lib) {
  if (!lib.version || !lib.version_source) return nullptr;
  if (*lib.version_source == VersionSource::file_name) return "file name";
  if (*lib.version_source == VersionSource::soname) return "soname";
  return nullptr;
}

std::string value_to_text(const Value& v) {
  struct Visitor {
    std::string operator()(std::nullptr_t) const { return "null"; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return fmt::format("{:.4g}", d); }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(const ValueList& list) const {
      std::string out;
      for (const auto& item : list) out += (out.empty() ? "" : ", ") + value_to_text(item);
      return out;
    }
  };
  return std::visit(Visitor{}, static_cast<const Value::variant&>(v));
}

}  // namespace interprobe::report
