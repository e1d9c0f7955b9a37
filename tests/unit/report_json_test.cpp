// Report model: JSON round trip, version rules, malformed input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "report/analysis/findings.hpp"
#include "model/json.hpp"
#include "model/schema_check.hpp"
#include "model/sections.hpp"

using namespace interprobe;
using namespace interprobe::report;

namespace {

Report sample_report() {
  Report r;
  r.tool.version = "0.1.0";
  r.tool.features = {.nvml = true, .hwloc = true, .libpci = true};
  r.tool.libraries["nvml"] = LibraryInfo{.found = false, .reason = "not found"};
  r.host.hostname = "gpu-vm-01";
  r.host.kernel = "6.1.0";
  r.host.started_at = "2026-12-02T10:00:00Z";
  r.host.duration_s = 1.5;
  r.probes.push_back({"system", ProbeStatus::ok, std::nullopt, 0.01});
  r.probes.push_back({"bandwidth", ProbeStatus::unsupported, "no GPU", 0.0});
  Finding f;
  f.id = "probe.failed";
  f.severity = Severity::warn;
  f.title = "t";
  f.evidence = {{"gbps", 12.5}, {"count", std::int64_t{3}}, {"ok", true}, {"why", std::string("x")}, {"none", nullptr}};
  f.remedy = "r";
  r.findings.push_back(f);
  SystemSection s;
  s.cpu_model = "AMD EPYC 9654";
  s.logical_cpus = 192;
  s.memory_bytes = std::int64_t{1} << 40;
  r.system = s;
  return r;
}

}  // namespace

TEST(ReportJson, RoundTripKeepsEveryField) {
  Report r = sample_report();
  std::string text = to_json_text(r);
  Report back = parse_report_text(text, "mem");
  EXPECT_EQ(to_json_text(back), text);
  ASSERT_TRUE(back.system);
  EXPECT_EQ(back.system->logical_cpus, 192);
  EXPECT_FALSE(back.system->os_name.has_value());
  ASSERT_EQ(back.probes.size(), 2u);
  EXPECT_EQ(back.probes[1].status, ProbeStatus::unsupported);
  EXPECT_EQ(back.probes[1].reason, "no GPU");
  ASSERT_EQ(back.findings.size(), 1u);
  // Evidence comes back keyed (JSON objects are sorted by key); values keep their types.
  std::map<std::string, Value> evidence(back.findings[0].evidence.begin(), back.findings[0].evidence.end());
  EXPECT_EQ(std::get<double>(evidence.at("gbps")), 12.5);
  EXPECT_EQ(std::get<std::int64_t>(evidence.at("count")), 3);
  EXPECT_EQ(std::get<bool>(evidence.at("ok")), true);
  EXPECT_TRUE(std::holds_alternative<std::nullptr_t>(evidence.at("none")));
}

TEST(ReportJson, MissingValuesAreNullNotStrings) {
  std::string text = to_json_text(sample_report());
  EXPECT_NE(text.find("\"os_name\": null"), std::string::npos);
  EXPECT_EQ(text.find("N/A"), std::string::npos);
}

TEST(ReportJson, InvalidUtf8FromTheMachineDoesNotThrow) {
  Report r = sample_report();
  r.system->cpu_model = std::string("bad\xff\xfe utf8");
  std::string text;
  ASSERT_NO_THROW(text = to_json_text(r));
  EXPECT_NO_THROW(parse_report_text(text, "mem"));
}

TEST(ReportJson, NewerMinorVersionIsRead) {
  std::string text = to_json_text(sample_report());
  const std::string current = std::string("\"") + kSchemaVersion + "\"";
  auto pos = text.find(current);
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, current.size(), "\"2.99.2\"");
  // A newer minor version may add keys; they are ignored.
  text.insert(text.find('{') + 1, "\"future_section\": {\"x\": 1},");
  Report r = parse_report_text(text, "newer.json");
  EXPECT_EQ(r.schema_version, "2.99.2");
}

TEST(ReportJson, OtherMajorVersionIsAClearError) {
  std::string text = to_json_text(sample_report());
  const std::string current = std::string("\"") + kSchemaVersion + "\"";
  text.replace(text.find(current), current.size(), "\"3.0.0\"");
  try {
    parse_report_text(text, "future.json");
    FAIL();
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("future.json"), std::string::npos);
    EXPECT_NE(msg.find("major version 3"), std::string::npos) << msg;
  }
}

TEST(ReportJson, TruncatedFileNamesFileAndByte) {
  std::string text = to_json_text(sample_report());
  try {
    parse_report_text(text.substr(0, text.size() / 2), "cut.json");
    FAIL();
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("cut.json"), std::string::npos);
    EXPECT_NE(msg.find("byte"), std::string::npos) << msg;
  }
}

TEST(ReportJson, WrongTypeNamesTheKeyPath) {
  std::string text = to_json_text(sample_report());
  auto pos = text.find("\"logical_cpus\": 192");
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, 19, "\"logical_cpus\": \"many\"");
  try {
    parse_report_text(text, "typed.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("system.logical_cpus"), std::string::npos) << e.what();
  }
  std::string no_probes = to_json_text(sample_report());
  no_probes.replace(no_probes.find("\"probes\""), 8, "\"probez\"");
  EXPECT_THROW(parse_report_text(no_probes, "p.json"), InputError);
}

TEST(ReportJson, AtomicWriteReplacesAndLeavesNoTempFiles) {
  char tmpl[] = "/tmp/interprobe-write-XXXXXX";
  std::filesystem::path dir = ::mkdtemp(tmpl);
  auto file = dir / "r.json";
  std::ofstream(file) << "old";
  write_report_file(file, sample_report());
  Report back = read_report_file(file);
  EXPECT_EQ(back.host.hostname, "gpu-vm-01");
  int entries = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1);
  EXPECT_THROW(write_report_file(dir / "missing-dir" / "r.json", sample_report()), InputError);
  std::filesystem::remove_all(dir);
}

TEST(ReportJson, MissingFileIsAnInputError) {
  EXPECT_THROW(read_report_file("/nonexistent/report.json"), InputError);
}

// Issue 12: `--verbose` lists NVML as missing on any machine without the driver; the finding
// is for machines whose inventory shows NVIDIA GPUs (or has no topology section to tell).
TEST(Findings, NvmlMissingOnlyMattersWhenTheInventoryShowsGpus) {
  interprobe::report::Report r;
  r.host.live = true;
  r.tool.libraries["nvml"] = interprobe::report::LibraryInfo{.found = false, .reason = "not found"};
  auto has_finding = [](const interprobe::report::Report& report, const char* id = "libraries.nvml_missing") {
    for (const auto& f : interprobe::analysis::derive_findings(report))
      if (f.id == id) return true;
    return false;
  };
  EXPECT_TRUE(has_finding(r));  // no topology section: cannot tell, keep the hint
  r.topology.emplace();
  EXPECT_FALSE(has_finding(r));  // no GPU on the bus
  r.topology->gpus.emplace_back();
  // Issue 36: with the topology read, gpu.driver_missing names the GPUs; one finding, not two.
  EXPECT_FALSE(has_finding(r));
  EXPECT_TRUE(has_finding(r, "gpu.driver_missing"));
}

// Schema 2.0 wrote the PCIe figure as bottleneck_gbps on NVLinked pairs too: read as 2.1 it moves
// to pcie_bottleneck_gbps, and an NVLinked pair's bottleneck is unknown rather than wrong.
TEST(ReportJson, A20ReportsPairBottleneckMovesToItsPcieName) {
  Report r = sample_report();
  r.topology.emplace();
  Gpu gpu;
  gpu.bdf = "0000:18:00.0";
  r.topology->gpus = {gpu};
  GpuPair nv, pcie;
  nv.a_bdf = pcie.a_bdf = "0000:18:00.0";
  nv.b_bdf = pcie.b_bdf = "0000:2a:00.0";
  nv.nvlink_count = 18;
  nv.path = "NV18";
  r.topology->gpu_pairs = {nv, pcie};
  auto j = nlohmann::json::parse(to_json_text(r));
  j["schema_version"] = "2.0.0";
  j["topology"]["gpus"][0].erase("compute_capability");
  for (auto& p : j["topology"]["gpu_pairs"]) {
    p.erase("pcie_bottleneck_gbps");
    p["bottleneck_gbps"] = 63.02;
  }
  Report back = parse_report_text(j.dump(), "old-2.0.json");
  EXPECT_EQ(back.schema_version, kSchemaVersion);
  ASSERT_TRUE(back.topology);
  const auto& pairs = back.topology->gpu_pairs;
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_FALSE(pairs[0].bottleneck_gbps);  // NV18: 63 GB/s was never its bottleneck
  EXPECT_EQ(pairs[0].pcie_bottleneck_gbps, 63.02);
  EXPECT_EQ(pairs[1].bottleneck_gbps, 63.02);  // a PCIe pair: the same figure under both names
  EXPECT_EQ(pairs[1].pcie_bottleneck_gbps, 63.02);
  EXPECT_FALSE(back.topology->gpus[0].compute_capability);
}

// Issue 35: the section table (model/sections.hpp) is the one list of sections. A section
// the schema has and the table lacks (or the reverse) fails here, and every list derived from it
// (the JSON writer's, the policy checker's metric and fact sections, compare's read values) follows.
TEST(SectionTable, EveryOptionalTopLevelKeyOfTheSchemaIsARowAndNoOther) {
  const auto schema = nlohmann::json::parse(report_schema_text());
  std::set<std::string> required(schema["required"].begin(), schema["required"].end());
  std::set<std::string> optional_keys;
  for (const auto& [key, value] : schema["properties"].items())
    if (!required.count(key)) optional_keys.insert(key);
  std::set<std::string> table;
  for (const auto& s : kSections)
    if (s.in_report_json) table.emplace(s.name);
  EXPECT_EQ(table, optional_keys);
  // A report no probe filled keeps none of them, not even as null.
  Report bare;
  bare.tool.version = "0.1.0";
  bare.host.started_at = "2026-12-02T10:00:00Z";
  const auto j = nlohmann::json::parse(to_json_text(bare));
  for (const auto& name : table) EXPECT_FALSE(j.contains(name)) << name;
  // Each probe-filled section names its probe; finding prefixes map to a probe.
  for (const auto& s : kSections) {
    if (!s.finding_prefix.empty()) {
      EXPECT_FALSE(s.probe.empty()) << s.name;
    }
  }
  EXPECT_EQ(section_names(&SectionInfo::policy_facts),
            (std::vector<std::string>{"probes", "topology", "virtualization", "bandwidth", "bottlenecks"}));
}
