// A report is foreign input: nesting, types, number ranges and file size are bounded, and
// every violation is an InputError naming the file and the key path.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "model/json.hpp"
#include "support/temp_tree.hpp"

using namespace interprobe;
using namespace interprobe::report;
namespace fs = std::filesystem;
using interprobe::testing::TempTree;

namespace {

// A written report whose first finding's evidence is `evidence` (raw JSON text).
std::string report_with_evidence(const std::string& evidence) {
  Report r;
  r.tool.version = "0.1.0";
  r.host.started_at = "2026-12-02T10:00:00Z";
  r.probes.push_back({"system", ProbeStatus::ok, std::nullopt, 0.01});
  Finding f;
  f.id = "x.y";
  f.severity = Severity::warn;
  f.title = "t";
  f.remedy = "r";
  f.evidence = {{"placeholder", std::int64_t{7}}};
  r.findings.push_back(f);
  SystemSection s;
  s.logical_cpus = 8;
  r.system = s;
  std::string text = to_json_text(r, -1);
  const std::string marker = "{\"placeholder\":7}";
  auto pos = text.find(marker);
  if (pos == std::string::npos) throw std::logic_error("marker not found in " + text);
  return text.replace(pos, marker.size(), evidence);
}

std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  if (pos == std::string::npos) throw std::logic_error(from + " not found");
  return text.replace(pos, from.size(), to);
}

// The InputError message parse_report_text gives, or "" when it parsed.
std::string parse_error(const std::string& text) {
  try {
    parse_report_text(text, "in.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string nested(int depth) {
  std::string out;
  for (int i = 0; i < depth; ++i) out += "{\"a\":";
  out += "1";
  out += std::string(static_cast<std::size_t>(depth), '}');
  return out;
}

}  // namespace

TEST(ReportInput, EvidenceNested100000DeepIsAnInputErrorNamingThePath) {
  std::string msg = parse_error(report_with_evidence("{\"deep\":" + nested(100000) + "}"));
  EXPECT_NE(msg.find("in.json: findings[0].evidence.deep.a.a."), std::string::npos) << msg.substr(0, 300);
  EXPECT_NE(msg.find("deeper than 64 levels"), std::string::npos) << msg.substr(0, 300);
  // Arrays count too, and the path names their index.
  std::string arrays = parse_error(report_with_evidence("{\"l\":[1," + std::string(100, '[') + std::string(100, ']') + "]}"));
  EXPECT_NE(arrays.find("findings[0].evidence.l[1][0][0]"), std::string::npos) << arrays.substr(0, 300);
}

TEST(ReportInput, ListsWithinTheLimitAreKept) {
  std::string deep = std::string(40, '[') + "1" + std::string(40, ']');
  Report r = parse_report_text(report_with_evidence("{\"deep\":" + deep + "}"), "in.json");
  ASSERT_EQ(r.findings.at(0).evidence.size(), 1u);
  const Value* v = &r.findings[0].evidence.at("deep");
  for (int level = 0; level < 40; ++level) {
    const auto* list = std::get_if<ValueList>(v);
    ASSERT_TRUE(list && list->size() == 1) << "level " << level;
    v = &list->front();
  }
  EXPECT_EQ(std::get<std::int64_t>(*v), 1);
}

TEST(ReportInput, EvidenceObjectsAreRefusedNamingTheKey) {
  // 2.0: evidence values are scalars or lists (the schema says so).
  std::string msg = parse_error(report_with_evidence("{\"deep\":" + nested(3) + "}"));
  EXPECT_NE(msg.find("in.json: findings[0].evidence.deep: expected string or number or boolean or null or array, found object"),
            std::string::npos) << msg;
}

TEST(ReportInput, EvidenceOfTheWrongTypeNamesTheKeyPath) {
  for (const char* wrong : {"5", "\"text\"", "[1,2]", "true"}) {
    std::string msg = parse_error(report_with_evidence(wrong));
    EXPECT_NE(msg.find("in.json: findings[0].evidence: expected an object, found"), std::string::npos) << wrong << ": " << msg;
  }
  // 2.0 writes {} for no evidence; null is refused like any other non-object.
  EXPECT_NE(parse_error(report_with_evidence("null")).find("findings[0].evidence: expected an object, found null"),
            std::string::npos);
}

TEST(ReportInput, NumbersBeyondDoubleRangeNameTheKeyPath) {
  std::string msg = parse_error(report_with_evidence("{\"gbps\":1e999}"));
  EXPECT_NE(msg.find("in.json: findings[0].evidence.gbps: unreadable value"), std::string::npos) << msg;
  std::string text = report_with_evidence("{}");
  msg = parse_error(replace_once(text, "\"duration_s\":0.0", "\"duration_s\":-1e400"));
  EXPECT_NE(msg.find("in.json: host.duration_s: unreadable value"), std::string::npos) << msg;
}

TEST(ReportInput, IntegersMustFitTheirField) {
  std::string text = report_with_evidence("{}");
  std::string msg = parse_error(replace_once(text, "\"logical_cpus\":8", "\"logical_cpus\":18446744073709551615"));
  EXPECT_NE(msg.find("in.json: system.logical_cpus: 18446744073709551615 is out of range"), std::string::npos) << msg;
  msg = parse_error(replace_once(text, "\"logical_cpus\":8", "\"logical_cpus\":8.5"));
  EXPECT_NE(msg.find("system.logical_cpus: expected integer or null, found 8.5"), std::string::npos) << msg;
  msg = parse_error(replace_once(text, "\"logical_cpus\":8", "\"logical_cpus\":1e300"));
  EXPECT_NE(msg.find("system.logical_cpus: expected integer or null, found 1e+300"), std::string::npos) << msg;
  msg = parse_error(replace_once(text, "\"duration_s\":0.0", "\"duration_s\":\"long\""));
  EXPECT_NE(msg.find("host.duration_s: expected a number, found string"), std::string::npos) << msg;
  // Evidence integers beyond int64 stay numbers.
  Report r = parse_report_text(report_with_evidence("{\"n\":18446744073709551615}"), "in.json");
  EXPECT_DOUBLE_EQ(std::get<double>(r.findings.at(0).evidence.at("n")), 18446744073709551615.0);
}

TEST(ReportInput, IntegerListsAreCheckedPerElement) {
  Report r;
  r.tool.version = "0.1.0";
  r.topology = TopologySection{};
  NumaNode n;
  n.id = 0;
  n.distances = {10, 21};
  r.topology->cpu.numa_nodes.push_back(n);
  std::string text = replace_once(to_json_text(r, -1), "\"distances\":[10,21]", "\"distances\":[10,1e300]");
  std::string msg = parse_error(text);
  EXPECT_NE(msg.find("topology.cpu.numa_nodes[0].distances[1]: expected an integer"), std::string::npos) << msg;
  // Every integer of the model is 64-bit: beyond that is out of range.
  text = replace_once(to_json_text(r, -1), "\"id\":0", "\"id\":9223372036854775808");
  msg = parse_error(text);
  EXPECT_NE(msg.find("topology.cpu.numa_nodes[0].id: 9223372036854775808 is out of range"), std::string::npos) << msg;
}

TEST(ReportInput, DevicesAndHugeFilesAreRefusedNamingFileAndCap) {
  auto started = std::chrono::steady_clock::now();
  try {
    read_report_file("/dev/zero");
    FAIL() << "/dev/zero was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/zero: not a regular file or pipe"), std::string::npos) << e.what();
  }
  TempTree dir;
  auto big = dir.path() / "big.json";
  std::ofstream(big) << "{}";
  fs::resize_file(big, kMaxReportBytes + 1);  // sparse: costs no disk
  try {
    read_report_file(big);
    FAIL() << "a file over the cap was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(big.string() + ": larger than 64 MiB"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

TEST(ReportInput, FifoWithoutWriterDoesNotHang) {
  TempTree dir;
  auto fifo = dir.path() / "r.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(read_report_file(fifo), InputError);  // empty: not a report
}

TEST(ReportInput, PipesAreStillRead) {
  std::string text = report_with_evidence("{\"a\":1}");
  ASSERT_LT(text.size(), 60000u);  // fits in the pipe buffer: no writer thread needed
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  Report r = read_report_file("/proc/self/fd/" + std::to_string(fds[0]));
  ::close(fds[0]);
  EXPECT_EQ(r.findings.at(0).id, "x.y");
}

TEST(ReportInput, NewerMinorVersionWithUnknownKeysIsStillRead) {
  std::string text = replace_once(report_with_evidence("{}"), "\"schema_version\":\"2.6.0\"",
                                  "\"schema_version\":\"2.7.0\",\"future\":{\"x\":[1,{\"y\":2}]}");
  EXPECT_EQ(parse_error(text), "");
}

TEST(ReportInput, SchemaViolationsNameTheKeyPath) {
  std::string text = report_with_evidence("{}");
  std::string msg = parse_error(replace_once(text, "\"severity\":\"warn\"", "\"severity\":\"critical\""));
  EXPECT_NE(msg.find("in.json: findings[0].severity: \"critical\" is not one of \"info\", \"warn\", \"fail\""),
            std::string::npos) << msg;
  msg = parse_error(replace_once(text, ",\"title\":\"t\"", ""));
  EXPECT_NE(msg.find("in.json: findings[0]: missing required key 'title'"), std::string::npos) << msg;
  msg = parse_error(replace_once(text, "\"duration_s\":0.0", "\"duration_s\":-3"));
  EXPECT_NE(msg.find("host.duration_s: -3 is below the minimum 0"), std::string::npos) << msg;
}

TEST(ReportInput, A1xReportMayLackKeysIts1xReaderDefaulted) {
  // 1.x readers gave missing keys defaults; an upgraded 1.x report keeps that leniency.
  std::string text = replace_once(report_with_evidence("{}"), "\"schema_version\":\"2.6.0\"", "\"schema_version\":\"1.0.0\"");
  text = replace_once(text, "\"duration_s\":0.01", "\"seconds\":0.01");
  text = replace_once(text, ",\"title\":\"t\"", "");
  Report r = parse_report_text(text, "old.json");
  EXPECT_DOUBLE_EQ(r.probes.at(0).duration_s, 0.01);
  EXPECT_EQ(r.findings.at(0).title, "");
  EXPECT_EQ(r.schema_version, kSchemaVersion);
}
