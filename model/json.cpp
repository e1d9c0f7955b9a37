#include "model/json.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "common/json_input.hpp"
#include "common/json_text.hpp"
#include "common/user_file.hpp"
#include "model/json_codec.hpp"
#include "model/json_upgrade.hpp"
#include "model/schema_check.hpp"

namespace interprobe::report {

static_assert(kMaxReportDepth == kMaxJsonDepth, "reports are parsed by parse_json_bounded");

namespace {

struct SchemaVersion {
  int major = -1, minor = -1;
};

// `schema_version`; 1.x and older 2.x reports are upgraded, other majors refused.
SchemaVersion schema_version_of(const json& top) {
  auto it = top.find("schema_version");
  if (it == top.end()) throw ReportFormatError("(top level): missing required key 'schema_version'");
  if (!it->is_string()) throw ReportFormatError(fmt::format("schema_version: expected a string, found {}", it->type_name()));
  const auto& version = it->get_ref<const std::string&>();
  int major = -1, minor = -1;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2 || major < 0 || minor < 0)
    throw ReportFormatError(fmt::format("schema_version '{}' is not a semantic version", version));
  if (major != kSchemaMajor && major != 1)
    throw ReportFormatError(fmt::format("schema_version {} has major version {}, this interprobe reads 1.x and {}.x; use "
                                        "an interprobe release that writes schema {}.x",
                                        version, major, kSchemaMajor, major));
  return {major, minor};
}

// A 1.x report may lack keys its reader defaulted ("count" → 0); what it decodes to must still
// be a valid 2.0 report, or `report FILE --json` would write a file that no reader accepts.
void check_upgraded(const Report& report, const std::string& label) {
  try {
    check_against_schema(report_to_json(report), RequiredKeys::checked);
  } catch (const ReportFormatError& e) {
    throw InputError(fmt::format("{}: a schema 1.x report that does not read as 2.0 ({}); a key is missing or "
                                 "out of range: re-create it with `interprobe run -o FILE`",
                                 label, e.what()));
  }
}

}  // namespace

std::string to_json_text(const Report& r, int indent) {
  return json_text(report_to_json(r), indent);
}

Report parse_report_text(const std::string& text, const std::string& label) {
  json j;
  try {
    j = parse_json_bounded(text);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: not a valid JSON report: broke at byte {} ({}); re-create it with "
                                 "`interprobe run -o FILE`",
                                 label, e.byte, e.what()));
  } catch (const JsonInputError& e) {
    throw InputError(fmt::format("{}: {}", label, e.what()));
  }
  try {
    if (!j.is_object()) throw ReportFormatError("(top level): expected an object at the top level");
    if (j.contains("fleet_schema_version"))
      throw ReportFormatError("a fleet report (`interprobe fleet -o`), not one machine's: `interprobe check --policy P FILE` "
                              "reads it; for the other commands take a node's report (jq '.nodes[0].report')");
    const SchemaVersion version = schema_version_of(j);
    bool from_1x = version.major == 1;
    if (from_1x) upgrade_from_1x(j);
    else if (version.minor == 0) upgrade_from_2_0(j);
    check_against_schema(j, from_1x ? RequiredKeys::lenient : RequiredKeys::checked);
    Report report = report_from_json(j);
    if (from_1x) check_upgraded(report, label);
    return report;
  } catch (const ReportFormatError& e) {
    throw InputError(fmt::format("{}: {}", label, e.what()));
  } catch (const json::exception& e) {
    // A shape the schema check did not foresee is still the file's fault, not ours; with
    // JSON_DIAGNOSTICS the message names the key path.
    throw InputError(fmt::format("{}: unexpected content ({}); re-create it with `interprobe run -o FILE`", label, e.what()));
  }
}

std::optional<int> written_schema_major(const std::string& text) {
  try {
    json j = parse_json_bounded(text);
    auto it = j.is_object() ? j.find("schema_version") : j.end();
    if (it == j.end() || !it->is_string()) return std::nullopt;
    int major = -1;
    if (std::sscanf(it->get_ref<const std::string&>().c_str(), "%d.", &major) != 1 || major < 0) return std::nullopt;
    return major;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Report read_report_file(const std::filesystem::path& path) {
  std::string text = read_user_file(path, {path.string(), "a report written by `interprobe run -o FILE`", kMaxReportBytes});
  return parse_report_text(text, path.string());
}

}  // namespace interprobe::report
