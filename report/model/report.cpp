#include "report/model/report.hpp"

#include <fmt/format.h>

namespace interprobe::report {

const char* to_string(ProbeStatus s) {
  switch (s) {
    case ProbeStatus::ok: return "ok";
    case ProbeStatus::unsupported: return "unsupported";
    case ProbeStatus::skipped: return "skipped";
    case ProbeStatus::failed: return "failed";
  }
  return "failed";
}

std::optional<ProbeStatus> probe_status_from(const std::string& s) {
  for (auto v : {ProbeStatus::ok, ProbeStatus::unsupported, ProbeStatus::skipped, ProbeStatus::failed})
    if (s == to_string(v)) return v;
  return std::nullopt;
}

const char* to_string(Severity s) {
  switch (s) {
    case Severity::info: return "info";
    case Severity::warn: return "warn";
    case Severity::fail: return "fail";
  }
  return "info";
}

std::optional<Severity> severity_from(const std::string& s) {
  for (auto v : {Severity::info, Severity::warn, Severity::fail})
    if (s == to_string(v)) return v;
  return std::nullopt;
}

const ProbeRecord* Report::probe(const std::string& name) const {
  for (const auto& p : probes)
    if (p.name == name) return &p;
  return nullptr;
}

std::string value_to_text(const Value& v) {
  struct Visitor {
    std::string operator()(std::nullptr_t) const { return "null"; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return fmt::format("{:.4g}", d); }
    std::string operator()(const std::string& s) const { return s; }
  };
  return std::visit(Visitor{}, v);
}

}  // namespace interprobe::report
