#include "report/model/json.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/user_file.hpp"
#include "report/model/json_codec.hpp"

namespace interprobe::report {

using codec::In;
using codec::json;
using codec::put;

namespace {

json encode_value(const Value& v) {
  struct Visitor {
    json operator()(std::nullptr_t) const { return nullptr; }
    json operator()(bool b) const { return b; }
    json operator()(std::int64_t i) const { return i; }
    json operator()(double d) const { return d; }
    json operator()(const std::string& s) const { return s; }
  };
  return std::visit(Visitor{}, v);
}

Value decode_value(const json& j) {
  if (j.is_null()) return nullptr;
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) return j.get<double>();
  if (j.is_number_integer()) return j.get<std::int64_t>();
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) return j.get<std::string>();
  return j.dump();
}

json encode_library(const LibraryInfo& l) {
  json j = {{"found", l.found}};
  put(j, "path", l.path);
  put(j, "version", l.version);
  put(j, "version_source", l.version_source);
  put(j, "driver_version", l.driver_version);
  put(j, "devices", l.devices);
  put(j, "reason", l.reason);
  put(j, "simulated", l.simulated);
  return j;
}

LibraryInfo decode_library(const In& in) {
  LibraryInfo l;
  l.found = in.req<bool>("found");
  l.path = in.opt<std::string>("path");
  l.version = in.opt<std::string>("version");
  l.version_source = in.opt<std::string>("version_source");
  l.driver_version = in.opt<std::string>("driver_version");
  l.devices = in.opt<int>("devices");
  l.reason = in.opt<std::string>("reason");
  l.simulated = in.opt<std::string>("simulated");
  return l;
}

void check_schema_version(const In& top) {
  auto version = top.req<std::string>("schema_version");
  int major = -1;
  if (std::sscanf(version.c_str(), "%d.", &major) != 1 || major < 0)
    top.fail(fmt::format("schema_version '{}' is not a semantic version", version));
  if (major != kSchemaMajor)
    top.fail(fmt::format("schema_version {} has major version {}, this interprobe reads {}.x; use an interprobe "
                         "release that writes schema {}.x",
                         version, major, kSchemaMajor, major));
}

}  // namespace

std::string to_json_text(const Report& r, int indent) {
  json j;
  j["schema_version"] = r.schema_version;
  json libraries = json::object();
  for (const auto& [name, lib] : r.tool.libraries) libraries[name] = encode_library(lib);
  j["tool"] = {{"name", r.tool.name}, {"version", r.tool.version}, {"features", r.tool.features},
               {"libraries", libraries}};
  put(j["tool"], "libraries_not_probed", r.tool.libraries_not_probed);
  json host = json::object();
  put(host, "hostname", r.host.hostname);
  put(host, "kernel", r.host.kernel);
  host["root"] = r.host.root;
  host["live"] = r.host.live;
  host["started_at"] = r.host.started_at;
  host["duration_s"] = r.host.duration_s;
  j["host"] = host;
  json probes = json::array();
  for (const auto& p : r.probes) {
    json pj = {{"name", p.name}, {"status", to_string(p.status)}, {"seconds", p.seconds}};
    put(pj, "reason", p.reason);
    probes.push_back(pj);
  }
  j["probes"] = probes;
  json findings = json::array();
  for (const auto& f : r.findings) {
    json evidence = json::object();
    for (const auto& [k, v] : f.evidence) evidence[k] = encode_value(v);
    findings.push_back({{"id", f.id}, {"severity", to_string(f.severity)}, {"title", f.title},
                        {"evidence", evidence}, {"remedy", f.remedy}});
  }
  j["findings"] = findings;
  if (r.system) j["system"] = codec::encode_system(*r.system);
  if (r.topology) j["topology"] = codec::encode_topology(*r.topology);
  if (r.virtualization) j["virtualization"] = codec::encode_virtualization(*r.virtualization);
  if (r.bandwidth) j["bandwidth"] = codec::encode_bandwidth(*r.bandwidth);
  if (r.collective) j["collective"] = codec::encode_collective(*r.collective);
  // Machine strings are untrusted and may hold invalid UTF-8: replace, never throw. ASCII only
  // (every control and non-ASCII character a \u escape), so `cat report.json` or `--json` on a
  // terminal cannot carry a control sequence either.
  return j.dump(indent, ' ', true, json::error_handler_t::replace) + "\n";
}

Report parse_report_text(const std::string& text, const std::string& label) {
  json j;
  try {
    j = codec::parse_bounded(text);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not a valid JSON report: broke at byte {} ({}); re-create it with "
                                 "`interprobe run -o FILE`",
                                 label, e.byte, e.what()));
  } catch (const codec::ReportFormatError& e) {
    throw InputError(fmt::format("{}: {}", label, e.what()));
  }
  try {
    In top(j, "");
    if (!j.is_object()) top.fail("expected a JSON object at the top level");
    check_schema_version(top);
    Report r;
    r.schema_version = top.req<std::string>("schema_version");
    In tool = top.child("tool");
    r.tool.name = tool.req<std::string>("name");
    r.tool.version = tool.req<std::string>("version");
    r.tool.features = tool.req<std::map<std::string, bool>>("features");
    for (const auto& [name, lib] : tool.opt_members("libraries")) r.tool.libraries[name] = decode_library(lib);
    r.tool.libraries_not_probed = tool.opt<std::string>("libraries_not_probed");
    In host = top.child("host");
    r.host.hostname = host.opt<std::string>("hostname");
    r.host.kernel = host.opt<std::string>("kernel");
    r.host.root = host.req<std::string>("root");
    r.host.live = host.req<bool>("live");
    r.host.started_at = host.req<std::string>("started_at");
    r.host.duration_s = host.req<double>("duration_s");
    for (const auto& p : top.array("probes")) {
      ProbeRecord rec;
      rec.name = p.req<std::string>("name");
      auto status = p.req<std::string>("status");
      auto parsed = probe_status_from(status);
      if (!parsed) p.fail(fmt::format("status '{}' is not one of ok, unsupported, skipped, failed", status));
      rec.status = *parsed;
      rec.reason = p.opt<std::string>("reason");
      rec.seconds = p.req<double>("seconds");
      r.probes.push_back(rec);
    }
    for (const auto& f : top.opt_array("findings")) {
      Finding finding;
      finding.id = f.req<std::string>("id");
      auto sev = f.req<std::string>("severity");
      auto parsed = severity_from(sev);
      if (!parsed) f.fail(fmt::format("severity '{}' is not one of info, warn, fail", sev));
      finding.severity = *parsed;
      finding.title = f.req<std::string>("title");
      finding.remedy = f.req<std::string>("remedy");
      for (const auto& [key, value] : f.opt_members("evidence")) finding.evidence.emplace_back(key, decode_value(value.raw()));
      r.findings.push_back(std::move(finding));
    }
    if (auto s = top.opt_child("system")) r.system = codec::decode_system(*s);
    if (auto s = top.opt_child("topology")) r.topology = codec::decode_topology(*s);
    if (auto s = top.opt_child("virtualization")) r.virtualization = codec::decode_virtualization(*s);
    if (auto s = top.opt_child("bandwidth")) r.bandwidth = codec::decode_bandwidth(*s);
    if (auto s = top.opt_child("collective")) r.collective = codec::decode_collective(*s);
    return r;
  } catch (const codec::ReportFormatError& e) {
    throw InputError(fmt::format("{}: {}", label, e.what()));
  } catch (const json::exception& e) {
    // A shape the checked reads above did not foresee is still the file's fault, not ours.
    throw InputError(fmt::format("{}: unexpected content ({}); re-create it with `interprobe run -o FILE`", label, e.what()));
  }
}

Report read_report_file(const std::filesystem::path& path) {
  std::string text = read_user_file(path, {path.string(), "a report written by `interprobe run -o FILE`", kMaxReportBytes});
  return parse_report_text(text, path.string());
}

}  // namespace interprobe::report
