#include "report/model/json.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

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
  // Machine strings are untrusted and may hold invalid UTF-8: replace, never throw.
  return j.dump(indent, ' ', false, json::error_handler_t::replace) + "\n";
}

Report parse_report_text(const std::string& text, const std::string& label) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not a valid JSON report: broke at byte {} ({}); re-create it with "
                                 "`interprobe run -o FILE`",
                                 label, e.byte, e.what()));
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
    if (auto libs = tool.opt_child("libraries")) {
      for (auto it = libs->raw().begin(); it != libs->raw().end(); ++it)
        r.tool.libraries[it.key()] = decode_library(In(it.value(), libs->path() + "." + it.key()));
    }
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
      if (f.has("evidence")) {
        for (auto it = f.raw()["evidence"].begin(); it != f.raw()["evidence"].end(); ++it)
          finding.evidence.emplace_back(it.key(), decode_value(it.value()));
      }
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
  }
}

Report read_report_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(fmt::format("{}: cannot open report ({}); give the path of a file written by "
                                 "`interprobe run -o`",
                                 path.string(), std::strerror(errno)));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_report_text(buffer.str(), path.string());
}

void write_file_atomic(const std::filesystem::path& path, const std::string& content) {
  auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string temp_name = fmt::format(".{}.tmp.XXXXXX", path.filename().string());
  std::string temp = (dir / temp_name).string();
  int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    throw InputError(fmt::format("{}: cannot write ({}); choose a writable directory for -o", path.string(),
                                 std::strerror(errno)));
  }
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      throw InputError(fmt::format("{}: write failed ({})", path.string(), std::strerror(err)));
    }
    done += static_cast<std::size_t>(n);
  }
  ::fchmod(fd, 0644);
  ::fsync(fd);
  ::close(fd);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    throw InputError(fmt::format("{}: cannot replace ({})", path.string(), std::strerror(err)));
  }
}

void write_report_file(const std::filesystem::path& path, const Report& report) {
  write_file_atomic(path, to_json_text(report));
}

}  // namespace interprobe::report
