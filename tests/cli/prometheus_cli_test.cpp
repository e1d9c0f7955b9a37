// `--format prometheus` through the binary (issue 20 items 3 and 4): every fixture and example
// report, fresh reports of the probing commands and a report with hostile strings are read back by
// tests/cli/validate_prometheus.py (the format's line grammar, then prometheus_client's parser);
// outputs broken on purpose must fail it, so the check cannot pass whatever it is given.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/run_binary.hpp"
#include "support/temp_tree.hpp"

using interprobe::testing::Process;
using interprobe::testing::run_interprobe;
using interprobe::testing::run_program;
using TempDir = interprobe::testing::TempTree;
namespace fs = std::filesystem;

namespace {

const std::string kSource = INTERPROBE_SOURCE_DIR;
const std::string kFixtures = INTERPROBE_FIXTURES;
const std::string kMinimal = kFixtures + "/minimal-kvm-guest";
const std::string kSeedReport = kSource + "/examples/reports/seed-case-glm5-tp8.json";
const std::string kThisVmReport = kSource + "/examples/reports/this-vm-run.json";
const std::string kHgx = kFixtures + "/topology/hgx-h100-nvswitch";

// The validator's verdict on a file: exit code, the families it read (JSON) or why not.
struct Validation {
  int exit_code = -1;
  nlohmann::json families;
  std::string why;
};

Validation validate_file(const fs::path& file) {
  Validation v;
  auto p = run_program(INTERPROBE_PYTHON3, {kSource + "/tests/cli/validate_prometheus.py", file.string()}, {}, {});
  v.exit_code = p.exit_code;
  v.why = p.err;
  if (p.exit_code == 0) v.families = nlohmann::json::parse(p.out);
  return v;
}

Validation validate_text(const std::string& text) {
  TempDir dir;
  auto file = dir.path() / "metrics.prom";
  std::ofstream(file, std::ios::binary) << text;
  return validate_file(file);
}

bool have_parser() {
  std::string python = INTERPROBE_PYTHON3;
  return !python.empty() && std::system((python + " -c 'import prometheus_client' 2>/dev/null").c_str()) == 0;
}

bool have_format() { return run_interprobe({"--version"}).out.find("prometheus=yes") != std::string::npos; }

#define SKIP_WITHOUT_PROMETHEUS()                                                                     \
  do {                                                                                                \
    if (!have_format()) GTEST_SKIP() << "built without prometheus-cpp";                              \
    if (!have_parser()) GTEST_SKIP() << "python3-prometheus-client not installed (install-deps --test)"; \
  } while (0)

// Runs interprobe with the arguments, expects exit 0 and valid metrics on stdout; the families.
nlohmann::json metrics_of(const std::vector<std::string>& args) {
  auto p = run_interprobe(args);
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.out.find('\x1b'), std::string::npos);
  Validation v = validate_text(p.out);
  EXPECT_EQ(v.exit_code, 0) << v.why << "\n" << p.out.substr(0, 2000);
  return v.families;
}

std::vector<fs::path> saved_reports() {
  std::vector<fs::path> out;
  for (const auto& dir : {kFixtures + "/reports", kSource + "/examples/reports"})
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Every repository report's metrics, with what printed each: the saved reports and the seed case
// fixture, the seed case through `analyze` (bottleneck families with --assume), the HGX and
// Proxmox topology fixtures and a `run` replayed from the minimal KVM guest.
std::vector<std::pair<std::string, std::vector<std::string>>> every_repository_output() {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  auto reports = saved_reports();
  reports.push_back(kFixtures + "/seed-case/report.json");
  for (const auto& file : reports) out.push_back({file.string(), {"report", file.string(), "--format", "prometheus"}});
  out.push_back({"analyze seed", {"analyze", kSeedReport, "--model", kSource + "/examples/models/llama-3.1-70b.json", "--tp", "8",
                                  "--assume", "gpu=h100-sxm", "--format", "prometheus"}});
  for (const char* tree : {"/topology/hgx-h100-nvswitch", "/topology/proxmox-q35-8gpu-rootports"})
    out.push_back({tree, {"topo", "--root", kFixtures + tree, "--format", "prometheus", "-q"}});
  out.push_back({"run minimal-kvm-guest",
                 {"run", "--root", kMinimal, "--only", "system,virtualization,topology", "--format", "prometheus", "-q"}});
  return out;
}

// What every report's metrics hold, whatever it measured.
void expect_common_families(const nlohmann::json& families, const std::string& what) {
  ASSERT_TRUE(families.contains("interprobe_info")) << what;
  ASSERT_EQ(families["interprobe_info"]["samples"].size(), 1u) << what;
  EXPECT_EQ(families["interprobe_info"]["samples"][0]["value"], 1.0) << what;
  ASSERT_TRUE(families.contains("interprobe_probe_ok")) << what;
  for (const auto& [name, family] : families.items()) {
    EXPECT_EQ(family["type"], "gauge") << what << " " << name;
    EXPECT_EQ(name.rfind("interprobe_", 0), 0u) << what << " " << name;
    EXPECT_EQ(family["help"].get<std::string>().find("interprobe report metric, unit"), std::string::npos)
        << what << ": " << name << " has no HELP text of its own (report/render/prometheus.cpp help_texts)";
  }
}

}  // namespace

TEST(PrometheusCli, EverySavedReportParses) {
  SKIP_WITHOUT_PROMETHEUS();
  for (const auto& file : saved_reports()) {
    SCOPED_TRACE(file.string());
    auto families = metrics_of({"report", file.string(), "--format", "prometheus"});
    expect_common_families(families, file.string());
  }
}

TEST(PrometheusCli, ExampleReportsCarryBandwidthAllreduceFindingsAndProbes) {
  SKIP_WITHOUT_PROMETHEUS();
  auto seed = metrics_of({"report", kSeedReport, "--format", "prometheus"});
  for (const char* family :
       {"interprobe_allreduce_time_seconds", "interprobe_finding", "interprobe_topology_gpu_pair_bottleneck_bytes_per_second"})
    EXPECT_TRUE(seed.contains(family)) << family;
  auto f = metrics_of({"report", kThisVmReport, "--format", "prometheus"});
  for (const char* family :
       {"interprobe_bandwidth_bytes_per_second", "interprobe_bandwidth_fit_peak_bytes_per_second", "interprobe_allreduce_time_seconds",
        "interprobe_allreduce_busbw_bytes_per_second", "interprobe_compute_gemm_floating_point_operations_per_second",
        "interprobe_finding", "interprobe_probe_duration_seconds"})
    EXPECT_TRUE(f.contains(family)) << family;
  // A bandwidth sample names its sweep and its size; all-reduce samples their backend and size.
  const auto& bw = f["interprobe_bandwidth_bytes_per_second"]["samples"][0]["labels"];
  EXPECT_TRUE(bw.contains("path") && bw.contains("size_bytes") && bw.contains("engine") && bw.contains("kind")) << bw;
  const auto& ar = f["interprobe_allreduce_time_seconds"]["samples"][0]["labels"];
  EXPECT_TRUE(ar.contains("backend") && ar.contains("size_bytes") && ar.contains("ranks")) << ar;
  for (const auto& s : f["interprobe_finding"]["samples"]) {
    EXPECT_TRUE(s["labels"].contains("id"));
    std::string severity = s["labels"]["severity"];
    EXPECT_TRUE(severity == "info" || severity == "warn" || severity == "fail") << severity;
  }
  for (const auto& s : f["interprobe_probe_ok"]["samples"])
    EXPECT_TRUE(s["value"] == 0.0 || s["value"] == 1.0) << s;
}

TEST(PrometheusCli, ProbingCommandsPrintMetrics) {
  SKIP_WITHOUT_PROMETHEUS();
  auto virt = metrics_of({"virt", "--root", kMinimal, "--format", "prometheus", "-q"});
  expect_common_families(virt, "virt");
  EXPECT_EQ(virt["interprobe_info"]["samples"][0]["labels"]["live"], "false");  // replayed from --root
  EXPECT_EQ(virt["interprobe_info"]["samples"][0]["labels"]["hypervisor"], "kvm");
  auto topo = metrics_of({"topo", "--root", kMinimal, "--format", "prometheus", "-q"});
  expect_common_families(topo, "topo");
  auto run = metrics_of({"run", "--root", kMinimal, "--only", "system,virtualization,topology", "--format", "prometheus", "-q"});
  expect_common_families(run, "run");
  EXPECT_TRUE(run.contains("interprobe_system_logical_cpus"));
  // A skipped probe is 0, never left out.
  bool bandwidth_zero = false;
  for (const auto& s : run["interprobe_probe_ok"]["samples"])
    if (s["labels"]["probe"] == "bandwidth") bandwidth_zero = s["value"] == 0.0;
  EXPECT_TRUE(bandwidth_zero) << run["interprobe_probe_ok"];
}

TEST(PrometheusCli, AssumedNumbersCarryTheirProvenance) {
  SKIP_WITHOUT_PROMETHEUS();
  // The seed case measured no GEMMs: --assume prices them (this VM's report measures its own now).
  auto f = metrics_of({"analyze", kSeedReport, "--model", kSource + "/examples/models/llama-3.1-70b.json", "--tp", "8",
                       "--assume", "gpu=h100-sxm", "--format", "prometheus"});
  ASSERT_TRUE(f.contains("interprobe_bottleneck_tokens_per_second"));
  // Every step and part has its provenance state set (issue 36: no longer a label of the numbers,
  // where each change of it broke the series), exactly one of its five states 1.
  ASSERT_TRUE(f.contains("interprobe_bottleneck_provenance"));
  std::map<std::string, int> states_per_part;
  std::set<std::string> provenances;
  for (const auto& s : f["interprobe_bottleneck_provenance"]["samples"]) {
    std::string part = s["labels"]["batch"].get<std::string>() + "/" + s["labels"]["part"].get<std::string>();
    ++states_per_part[part];
    if (s["value"] == 1.0) provenances.insert(s["labels"]["provenance"].get<std::string>());
  }
  for (const auto& [part, states] : states_per_part) EXPECT_EQ(states, 5) << part;
  for (const auto& s : f["interprobe_bottleneck_part_seconds"]["samples"]) {
    std::string part = s["labels"]["batch"].get<std::string>() + "/" + s["labels"]["part"].get<std::string>();
    EXPECT_TRUE(states_per_part.count(part)) << part << " has no provenance";
  }
  EXPECT_TRUE(provenances.count("assumed")) << "GEMMs priced from h100-sxm specs must say so";
  // The seed report is a constructed fixture: the info series says so (it said only simulated="false").
  ASSERT_TRUE(f.contains("interprobe_info"));
  EXPECT_EQ(f["interprobe_info"]["samples"][0]["labels"]["constructed"], "true") << f["interprobe_info"];
  auto measured = metrics_of({"report", kSource + "/examples/reports/this-vm-run.json", "--format", "prometheus"});
  EXPECT_EQ(measured["interprobe_info"]["samples"][0]["labels"]["constructed"], "false") << measured["interprobe_info"];
  if (f.contains("interprobe_bandwidth_expected_bytes_per_second")) {
    for (const auto& s : f["interprobe_bandwidth_expected_bytes_per_second"]["samples"]) EXPECT_EQ(s["labels"]["provenance"], "not_measured");
  }
}

TEST(PrometheusCli, HostileMachineStringsRoundTrip) {
  SKIP_WITHOUT_PROMETHEUS();
  TempDir dir;
  std::ifstream in(kSeedReport);
  nlohmann::json report = nlohmann::json::parse(in);
  const std::string product = "Evil \"Corp\" \\ PC\nnext_line{x=\"1\"} 1 \xc3\xa9";
  ASSERT_TRUE(report.contains("virtualization"));
  report["virtualization"]["product"] = product;
  auto file = dir.path() / "hostile.json";
  std::ofstream(file) << report.dump();
  auto families = metrics_of({"report", file.string(), "--format", "prometheus"});
  ASSERT_TRUE(families.contains("interprobe_info"));
  // The parser gives back exactly the string: quotes, backslash, newline and UTF-8 survived.
  EXPECT_EQ(families["interprobe_info"]["samples"][0]["labels"]["product"], product);
  EXPECT_FALSE(families.contains("next_line"));
}

TEST(PrometheusCli, ReportWritesTheMetricsFileAtomicallyWithExportPrometheus) {
  SKIP_WITHOUT_PROMETHEUS();
  TempDir dir;
  auto out = dir.path() / "interprobe.prom";
  auto p = run_interprobe({"report", kThisVmReport, "--export-prometheus", out.string(), "--format", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.out.rfind("{", 0), 0u) << "stdout is what --format asks: " << p.out.substr(0, 200);
  // Issue 36: -o is the JSON report on every command; the old `report --format prometheus -o` is refused.
  auto old = run_interprobe({"report", kThisVmReport, "--format", "prometheus", "-o", (dir.path() / "x").string()});
  EXPECT_EQ(old.exit_code, 2);
  EXPECT_NE(old.err.find("--export-prometheus"), std::string::npos) << old.err;
  Validation v = validate_file(out);
  EXPECT_EQ(v.exit_code, 0) << v.why;
  EXPECT_TRUE(v.families.contains("interprobe_bandwidth_bytes_per_second"));
}

TEST(PrometheusCli, CommandsWithoutAReportRefuseTheFormat) {
  auto compare = run_interprobe({"compare", kSeedReport, kSeedReport, "--format", "prometheus"});
  EXPECT_EQ(compare.exit_code, 2);
  EXPECT_NE(compare.err.find("report FILE --format prometheus"), std::string::npos) << compare.err;
  EXPECT_TRUE(compare.out.empty());
  auto check = run_interprobe({"check", "--policy", kSource + "/examples/policies/generic-gpu-vm.json", kSeedReport,
                               "--format", "prometheus"});
  EXPECT_EQ(check.exit_code, 2) << check.err;
  // Nor has check or snapshot an HTML page: exit 2 naming the option, nothing on stdout.
  auto html = run_interprobe({"check", "--policy", kSource + "/examples/policies/generic-gpu-vm.json", kSeedReport, "--format", "html"});
  EXPECT_EQ(html.exit_code, 2) << html.err;
  EXPECT_NE(html.err.find("check --format html"), std::string::npos) << html.err;
  EXPECT_TRUE(html.out.empty()) << html.out.substr(0, 200);
  auto snapshot = run_interprobe({"snapshot", "--root", std::string(INTERPROBE_FIXTURES) + "/minimal-kvm-guest", "-o", "/nonexistent/s.tar.gz",
                                  "--format", "html"});
  EXPECT_EQ(snapshot.exit_code, 2) << snapshot.err;
  EXPECT_NE(snapshot.err.find("snapshot --format html"), std::string::npos) << snapshot.err;
}

// The validator must reject what node_exporter would: each break of the escaping or the layout.
TEST(PrometheusCli, TheValidatorRejectsBrokenOutput) {
  SKIP_WITHOUT_PROMETHEUS();
  TempDir dir;
  std::ifstream in(kSeedReport);
  nlohmann::json report = nlohmann::json::parse(in);
  report["virtualization"]["product"] = "a \"quoted\" back\\slash\nnewline";
  auto file = dir.path() / "hostile.json";
  std::ofstream(file) << report.dump();
  auto p = run_interprobe({"report", file.string(), "--format", "prometheus"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const std::string good = p.out;
  ASSERT_EQ(validate_text(good).exit_code, 0);
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
  };
  const std::vector<std::pair<std::string, std::string>> breaks{
      {replaced("\\\"quoted\\\"", "\"quoted\""), "quotes not escaped"},
      {replaced("\\\\slash", "\\slash"), "backslash not doubled"},
      {replaced("\\nnewline", "\nnewline"), "newline written raw"},
      {replaced("interprobe_info{", "interprobe info{"), "space in a name"},
      {replaced("} 1\n", "} 1 1733300000000\n"), "a timestamp"},
      {good + good.substr(good.find("interprobe_info{"), good.find('\n', good.find("interprobe_info{")) -
                                                             good.find("interprobe_info{") + 1),
       "a sample apart from its family"},
      {"# HELP interprobe_x a\n# HELP interprobe_x b\n# TYPE interprobe_x gauge\ninterprobe_x 1\n", "two HELP lines"},
  };
  for (const auto& [text, why] : breaks) {
    Validation v = validate_text(text);
    EXPECT_EQ(v.exit_code, 1) << why << " passed the validator";
  }
}

// Issue 36: names follow Prometheus' conventions. The old output had interprobe_bandwidth_gbps,
// ..._fit_t0_us, ..._link_current_gts, ..._tokens_per_s and ..._nvlink_count.
TEST(PrometheusCli, EveryNameSaysItsBaseUnitAndNoGaugeLooksLikeACounterOrHistogram) {
  SKIP_WITHOUT_PROMETHEUS();
  const std::regex abbreviated(
      ".*_(us|ms|ns|s|gbps|gts|tflops|ghz|mhz|w|per_s|fraction|count|total|sum|bucket)$|.*_(us|ms|ns|gb|mb|kb)_.*");
  std::size_t families = 0;
  for (const auto& [what, args] : every_repository_output()) {
    SCOPED_TRACE(what);
    auto metrics = metrics_of(args);
    for (const auto& [name, family] : metrics.items()) {
      ++families;
      EXPECT_FALSE(std::regex_match(name, abbreviated)) << name;
      EXPECT_EQ(family["type"], "gauge") << name;
    }
  }
  EXPECT_GT(families, 80u);
}

// A copy of a report with every measured number halved, each verdict moved to another value and
// the clock a day on: what changes when the machine is measured again.
void remeasure(nlohmann::json& j) {
  auto next = [](const std::string& value, const std::vector<std::string>& cycle) {
    auto at = std::find(cycle.begin(), cycle.end(), value);
    return at == cycle.end() ? value : cycle[(at - cycle.begin() + 1) % cycle.size()];
  };
  auto ends = [](const std::string& key, const std::string& tail) {
    return key.size() >= tail.size() && key.compare(key.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (j.is_array())
    for (auto& v : j) remeasure(v);
  if (!j.is_object()) return;
  for (auto& [key, v] : j.items()) {
    if (v.is_number_float() && (ends(key, "_us") || ends(key, "gbps") || ends(key, "tflops") || ends(key, "_fraction") ||
                                key == "tokens_per_s" || key == "duration_s" || key == "power_w"))
      v = v.get<double>() * 0.5;
    else if (v.is_string() && key == "bottleneck")
      v = next(v, {"communication_latency", "communication_bandwidth", "gemm_memory_bound", "gemm_compute_bound", "cache_reads",
                   "launch_overhead"});
    else if (v.is_string() && key == "bound")
      v = next(v, {"memory", "compute", "latency"});
    else if (v.is_string() && key == "provenance")
      v = next(v, {"measured", "interpolated", "extrapolated"});
    else if (v.is_string() && key == "truth")
      v = next(v, {"p2p", "claimed_but_staged", "staged", "corrupt"});
    else
      remeasure(v);
  }
}

// Each series as "name{labels}": what a dashboard or an alert rule selects.
std::set<std::string> series_of(const nlohmann::json& families) {
  std::set<std::string> out;
  for (const auto& [name, family] : families.items())
    if (name != "interprobe_finding")  // a finding comes and goes with what it finds; its labels are id and severity
      for (const auto& s : family["samples"]) out.insert(name + s["labels"].dump());
  return out;
}

// Issue 36: `interprobe_bottleneck_tokens_per_s{bottleneck="communication_latency",...}` put a
// verdict in a label, so each change of it made a new series and broke the old one's graph.
TEST(PrometheusCli, AReportMeasuredAgainKeepsEverySeries) {
  SKIP_WITHOUT_PROMETHEUS();
  for (const auto& report : {kThisVmReport, kSeedReport}) {
    SCOPED_TRACE(report);
    TempDir dir;
    nlohmann::json j = nlohmann::json::parse(std::ifstream(report));
    nlohmann::json again = j;
    remeasure(again);
    again["host"]["started_at"] = "2026-12-24T18:00:00Z";
    ASSERT_NE(again.dump(), j.dump());
    auto file = dir.path() / "again.json";
    std::ofstream(file) << again.dump();
    auto before = metrics_of({"report", report, "--format", "prometheus"});
    auto after = metrics_of({"report", file.string(), "--format", "prometheus"});
    EXPECT_EQ(series_of(before), series_of(after));
    ASSERT_TRUE(before.contains("interprobe_bottleneck_tokens_per_second"));
    // The numbers did change: the check compares series, not values.
    EXPECT_NE(before["interprobe_bottleneck_tokens_per_second"]["samples"][0]["value"],
              after["interprobe_bottleneck_tokens_per_second"]["samples"][0]["value"]);
    EXPECT_NE(before["interprobe_report_timestamp_seconds"], after["interprobe_report_timestamp_seconds"]);
  }
}

// Issue 36: re-rendering a saved report must not look like a fresh measurement.
TEST(PrometheusCli, TheTimestampIsTheReportsMeasurementNotTheRendering) {
  SKIP_WITHOUT_PROMETHEUS();
  auto seed = metrics_of({"report", kSeedReport, "--format", "prometheus"});
  ASSERT_TRUE(seed.contains("interprobe_report_timestamp_seconds")) << seed.dump().substr(0, 300);
  // host.started_at of the seed report: 2026-12-04T14:30:37Z.
  EXPECT_EQ(seed["interprobe_report_timestamp_seconds"]["samples"][0]["value"], 1796394637.0);
  for (const auto& [what, args] : every_repository_output()) {
    auto families = metrics_of(args);
    EXPECT_EQ(families["interprobe_report_timestamp_seconds"]["samples"].size(), 1u) << what;
  }
}

// Issue 36: a gauge per GPU pair and P2P capability, as nvidia-smi topo -p2p shows them.
TEST(PrometheusCli, EveryGpuPairHasItsP2pSupportGauges) {
  SKIP_WITHOUT_PROMETHEUS();
  // HGX H100, 8 GPUs on NVSwitch: NVML says OK for every pair and capability.
  auto hgx = metrics_of({"topo", "--root", kHgx, "--format", "prometheus", "-q"});
  ASSERT_TRUE(hgx.contains("interprobe_p2p_supported")) << "no per-pair P2P gauge";
  std::set<std::string> pairs;
  std::map<std::string, int> kinds;
  for (const auto& s : hgx["interprobe_p2p_supported"]["samples"]) {
    pairs.insert(s["labels"]["gpu_a"].get<std::string>() + "-" + s["labels"]["gpu_b"].get<std::string>());
    ++kinds[s["labels"]["kind"].get<std::string>()];
    EXPECT_EQ(s["value"], 1.0) << s;
  }
  EXPECT_EQ(pairs.size(), 28u) << "8 GPUs: 28 pairs";
  EXPECT_EQ(kinds, (std::map<std::string, int>{{"atomics", 28}, {"nvlink", 28}, {"read", 28}, {"write", 28}}));
  ASSERT_TRUE(hgx.contains("interprobe_topology_gpu_pair_nvlinks"));
  EXPECT_EQ(hgx["interprobe_topology_gpu_pair_nvlinks"]["samples"][0]["value"], 18.0);
  // The seed case (Proxmox guest): NVML says not supported for every pair: the same series, all 0.
  auto seed = metrics_of({"report", kSeedReport, "--format", "prometheus"});
  ASSERT_TRUE(seed.contains("interprobe_p2p_supported"));
  EXPECT_EQ(seed["interprobe_p2p_supported"]["samples"].size(), 28u * 4u);
  for (const auto& s : seed["interprobe_p2p_supported"]["samples"]) EXPECT_EQ(s["value"], 0.0) << s;
}

// promtool is Prometheus' own checker (Debian: the `prometheus` package). Searched on PATH.
std::string promtool() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = (dir.empty() ? "." : dir) + "/promtool";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// What `promtool check metrics` says of a text: exit code and its complaints.
Process promtool_check(const std::string& tool, const std::string& text) {
  TempDir dir;
  auto file = dir.path() / "metrics.prom";
  std::ofstream(file, std::ios::binary) << text;
  return run_program("/bin/sh", {"-c", "exec \"$0\" check metrics < \"$1\"", tool, file.string()}, {}, {});
}

// Issue 36: promtool rejected the names ("interprobe_bandwidth_fit_t0_us ... should not contain
// abbreviated units", "..._nvlink_count non-histogram and non-summary metrics should not have
// \"_count\" suffix"); every repository report's output must pass it.
TEST(PrometheusCli, PromtoolChecksEveryRepositoryReportClean) {
  if (!have_format()) GTEST_SKIP() << "built without prometheus-cpp";
  std::string tool = promtool();
  if (tool.empty())
    GTEST_SKIP() << "promtool not installed: apt-get install --no-install-recommends prometheus (Debian 12; "
                    "scripts/install-deps --test installs it)";
  // The check can fail: a name with an abbreviated unit, as the old output had.
  auto old = promtool_check(tool, "# HELP interprobe_bandwidth_fit_t0_us x\n# TYPE interprobe_bandwidth_fit_t0_us gauge\n"
                                  "interprobe_bandwidth_fit_t0_us 1.5\n");
  EXPECT_NE(old.exit_code, 0) << old.out << old.err;
  EXPECT_NE((old.out + old.err).find("abbreviated units"), std::string::npos) << old.out << old.err;
  // Label values come from the machine: a DMI product string with quotes, a backslash, a newline
  // and a line that would be a sample of its own must stay one escaped label value.
  TempDir dir;
  nlohmann::json hostile = nlohmann::json::parse(std::ifstream(kSeedReport));
  hostile["virtualization"]["product"] = "Evil \"Corp\" \\ PC\nnext_line{x=\"1\"} 1 \xc3\xa9";
  auto hostile_file = (dir.path() / "hostile.json").string();
  std::ofstream(hostile_file) << hostile.dump();
  auto outputs = every_repository_output();
  outputs.push_back({"hostile product string", {"report", hostile_file, "--format", "prometheus"}});
  for (const auto& [what, args] : outputs) {
    auto p = run_interprobe(args);
    ASSERT_EQ(p.exit_code, 0) << what << ": " << p.err;
    auto check = promtool_check(tool, p.out);
    EXPECT_EQ(check.exit_code, 0) << what << ":\n" << check.out << check.err;
    EXPECT_EQ(check.out + check.err, "") << what;
  }
}

// Measured per-pair bandwidth where it was measured (simulated GPUs, not run on a GPU): an H100
// NVSwitch board copies peer-to-peer between all 28 pairs; a KVM guest with P2P off only staged.
TEST(PrometheusCli, SimulatedGpusGiveMeasuredBandwidthAndTheP2pVerdictPerPair) {
  SKIP_WITHOUT_PROMETHEUS();
  struct Case {
    const char* device;
    std::size_t peer_pairs;
    const char* truth;
  };
  for (const auto& [device, peer_pairs, truth] : {Case{"h100-sxm-8x-nvswitch.json", 28, "p2p"},
                                                  Case{"rtx-pro-6000-8x-kvm-p2p-off.json", 0, "staged"}}) {
    SCOPED_TRACE(device);
    auto p = run_interprobe({"bw", "--engine", "cuda", "--sizes", "4K,1M", "--budget", "0.02", "--target-cv", "0.2", "-q",
                             "--format", "prometheus"},
                            {std::string("INTERPROBE_CUDA_LIB=") + INTERPROBE_SIM_CUDA,
                             std::string("INTERPROBE_NVML_LIB=") + INTERPROBE_SIM_NVML,
                             std::string("INTERPROBE_SIM_CONFIG=") + INTERPROBE_SIM_DEVICES + "/" + device});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    Validation v = validate_text(p.out);
    ASSERT_EQ(v.exit_code, 0) << v.why;
    const auto& f = v.families;
    EXPECT_EQ(f.contains("interprobe_p2p_peer_bandwidth_bytes_per_second")
                  ? f["interprobe_p2p_peer_bandwidth_bytes_per_second"]["samples"].size()
                  : 0u,
              peer_pairs);
    ASSERT_TRUE(f.contains("interprobe_p2p_staged_bandwidth_bytes_per_second"));
    EXPECT_EQ(f["interprobe_p2p_staged_bandwidth_bytes_per_second"]["samples"].size(), 28u);
    for (const auto& s : f["interprobe_p2p_staged_bandwidth_bytes_per_second"]["samples"])
      EXPECT_GT(s["value"].get<double>(), 1e9) << "bytes/s, not GB/s: " << s;
    ASSERT_TRUE(f.contains("interprobe_p2p_truth"));
    std::size_t ones = 0;
    for (const auto& s : f["interprobe_p2p_truth"]["samples"])
      if (s["value"] == 1.0) {
        ++ones;
        EXPECT_EQ(s["labels"]["truth"], truth) << s;
      }
    EXPECT_EQ(ones, 28u);
  }
}
