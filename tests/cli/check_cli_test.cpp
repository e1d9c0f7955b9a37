// `interprobe check` through the binary: presets against every fixture report and against
// reports made from fixture trees, the issue's Proxmox case, JUnit read back with a real XML
// parser (tests/cli/validate_junit.py over Python's xml.etree), bad policies (exit 2).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/run_binary.hpp"

using interprobe::testing::run_interprobe;
using interprobe::testing::run_program;
namespace fs = std::filesystem;

namespace {

const std::string kSource = INTERPROBE_SOURCE_DIR;
const std::string kFixtures = INTERPROBE_FIXTURES;
const std::string kPolicies = kSource + "/examples/policies";
const std::string kProxmox = kFixtures + "/virt/proxmox-kvm-q35";

fs::path temp_dir() {
  char tmpl[] = "/tmp/interprobe-check-XXXXXX";
  return ::mkdtemp(tmpl);
}

std::vector<fs::path> presets() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kPolicies))
    if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t preset_items(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in).at("items").size();
}

// The JUnit file as the validator read it: test case name -> pass, failure or skipped. Empty
// (with a test failure) when the file is not JUnit as Jenkins reads it.
std::map<std::string, std::string> read_junit(const fs::path& file) {
  std::string python = INTERPROBE_PYTHON3;
  if (python.empty()) return {};
  auto p = run_program(python, {kSource + "/tests/cli/validate_junit.py", file.string()}, {}, {});
  EXPECT_EQ(p.exit_code, 0) << file << ": " << p.err;
  std::map<std::string, std::string> cases;
  std::istringstream lines(p.out);
  std::string name, status;
  while (lines >> name >> status) cases[name] = status;
  return cases;
}

std::map<std::string, std::string> outcomes(const nlohmann::json& check) {
  std::map<std::string, std::string> out;
  for (const auto& item : check.at("items")) out[item.at("id")] = item.at("outcome");
  return out;
}

// Runs check --json --junit on one report and checks what holds for any policy and report.
nlohmann::json check_one(const fs::path& policy, const std::vector<std::string>& input, const fs::path& junit) {
  std::vector<std::string> args{"check", "--policy", policy.string(), "--json", "--junit", junit.string()};
  args.insert(args.end(), input.begin(), input.end());
  auto p = run_interprobe(args);
  EXPECT_TRUE(p.exit_code == 0 || p.exit_code == 1) << policy << " " << p.exit_code << ": " << p.err;
  nlohmann::json j = nlohmann::json::parse(p.out);
  const auto& s = j.at("summary");
  std::size_t items = preset_items(policy);
  EXPECT_EQ(j.at("items").size(), items);
  EXPECT_EQ(s.at("pass").get<std::size_t>() + s.at("warn").get<std::size_t>() + s.at("fail").get<std::size_t>() +
                s.at("skipped").get<std::size_t>(),
            items);
  bool gated = false;
  for (const auto& item : j.at("items")) {
    gated = gated || item.at("gates").get<bool>();
    // Skipped means not measured, and says why.
    if (item.at("outcome") == "skipped") {
      EXPECT_FALSE(item.at("detail").get<std::string>().empty()) << item.dump();
    }
  }
  EXPECT_EQ(p.exit_code, gated ? 1 : 0) << policy;
  auto cases = read_junit(junit);
  if (!cases.empty()) {
    EXPECT_EQ(cases.size(), items);
    for (const auto& item : j.at("items")) {
      std::string want = item.at("gates").get<bool>() ? "failure" : item.at("outcome") == "skipped" ? "skipped" : "pass";
      EXPECT_EQ(cases[item.at("id")], want) << policy << " " << item.at("id");
    }
  }
  return j;
}

}  // namespace

TEST(CheckCli, EveryPresetAgainstEveryFixtureReport) {
  auto dir = temp_dir();
  std::vector<fs::path> reports{kFixtures + "/seed-case/report.json"};
  for (const auto* folder : {"/tests/fixtures/reports", "/examples/reports"})
    for (const auto& e : fs::directory_iterator(kSource + folder))
      if (e.path().extension() == ".json") reports.push_back(e.path());
  // Reports made from fixture trees: topology alone, and every inventory probe.
  for (const auto* tree : {"topology/proxmox-q35-8gpu-rootports", "topology/hgx-h100-nvswitch", "topology/baremetal-2s-8gpu-pcie",
                           "topology/q35-rootbus-gpus", "topology/i440fx-guest"}) {
    fs::path out = dir / (fs::path(tree).filename().string() + ".json");
    auto p = run_interprobe({"topo", "--root", kFixtures + "/" + tree, "-o", out.string(), "--quiet"});
    ASSERT_EQ(p.exit_code, 0) << tree << ": " << p.err;
    reports.push_back(out);
  }
  fs::path virt = dir / "proxmox-kvm-q35-run.json";
  ASSERT_EQ(run_interprobe({"run", "--root", kProxmox, "-o", virt.string(), "--quiet"}).exit_code, 0);
  reports.push_back(virt);
  ASSERT_EQ(presets().size(), 3u);
  for (const auto& policy : presets())
    for (const auto& report : reports) {
      SCOPED_TRACE(policy.filename().string() + " x " + report.string());
      check_one(policy, {report.string()}, dir / "junit.xml");
    }
  fs::remove_all(dir);
}

TEST(CheckCli, PresetsJudgeWhatTheFixturesCarry) {
  auto dir = temp_dir();
  // HGX tree: 8 GPUs on NV18 at 450 GB/s, NUMA known; nothing measured is judged.
  fs::path hgx = dir / "hgx.json";
  ASSERT_EQ(run_interprobe({"topo", "--root", kFixtures + "/topology/hgx-h100-nvswitch", "-o", hgx.string(), "--quiet"}).exit_code, 0);
  auto h = outcomes(check_one(kPolicies + "/hgx-h100.json", {hgx.string()}, dir / "j.xml"));
  for (const char* id : {"gpu-count", "nvlink-all-pairs", "nvlink-rate", "gpu-numa-exposed", "gpu-link-gen5"}) EXPECT_EQ(h[id], "pass") << id;
  for (const char* id : {"p2p-verified", "allreduce-busbw", "decode-not-comm-bound"}) EXPECT_EQ(h[id], "skipped") << id;
  // The same policy on a PCIe machine: no NVLink.
  fs::path pcie = dir / "pcie.json";
  ASSERT_EQ(run_interprobe({"topo", "--root", kFixtures + "/topology/baremetal-2s-8gpu-pcie", "-o", pcie.string(), "--quiet"}).exit_code, 0);
  auto b = outcomes(check_one(kPolicies + "/hgx-h100.json", {pcie.string()}, dir / "j.xml"));
  EXPECT_EQ(b["nvlink-all-pairs"], "fail");
  EXPECT_EQ(b["nvlink-rate"], "fail");
  EXPECT_EQ(b["gpu-links-trained"], "warn");  // one A100 trained at x8
  // The seed case (50 us 8-byte all-reduce, clique unchecked, NUMA hidden, port at 16 GT/s).
  auto s = outcomes(check_one(kPolicies + "/pcie-gen5-8gpu-vm.json", {kFixtures + "/seed-case/report.json"}, dir / "j.xml"));
  EXPECT_EQ(s["machine-type"], "pass");
  EXPECT_EQ(s["allreduce-latency"], "warn");
  EXPECT_EQ(s["gpu-numa-exposed"], "warn");
  EXPECT_EQ(s["emulated-port-speed"], "warn");
  EXPECT_EQ(s["p2p-clique-checked"], "warn");
  EXPECT_EQ(s["p2p-clique"], "skipped");  // not read without root: not a pass
  fs::remove_all(dir);
}

// The issue's done-when: the generic VM preset on the Proxmox fixture, probes run by check.
TEST(CheckCli, GenericVmPolicyOnTheProxmoxFixtureFailsWhatItShould) {
  auto dir = temp_dir();
  fs::path junit = dir / "junit.xml";
  auto j = check_one(kPolicies + "/generic-gpu-vm.json", {"--root", kProxmox}, junit);
  auto o = outcomes(j);
  EXPECT_EQ(o["p2p-clique"], "fail");
  EXPECT_EQ(o["gpu-numa-exposed"], "warn");
  EXPECT_EQ(o["emulated-port-speed"], "warn");
  std::set<std::string> not_passed{"p2p-clique", "gpu-numa-exposed", "emulated-port-speed", "gpu-link-visible"};
  int passed = 0;
  for (const auto& [id, outcome] : o) {
    if (not_passed.count(id)) {
      EXPECT_NE(outcome, "pass") << id;
    } else {
      EXPECT_TRUE(outcome == "pass" || outcome == "skipped") << id << " " << outcome;
      passed += outcome == "pass";
    }
  }
  EXPECT_GE(passed, 8);
  // What needs the live machine (copies, all-reduces) is skipped with the probe's reason.
  for (const auto& item : j.at("items"))
    if (item.at("id") == "allreduce-latency") {
      EXPECT_EQ(item.at("outcome"), "skipped");
      EXPECT_NE(item.at("detail").get<std::string>().find("collective probe was unsupported"), std::string::npos) << item.dump();
    }
  // Default: only fail-severity items gate; --fail-on warn makes every warned item a JUnit failure.
  auto cases = read_junit(junit);
  if (!cases.empty()) {
    EXPECT_EQ(cases["gpu-numa-exposed"], "pass");
  }
  auto strict = run_interprobe({"check", "--policy", kPolicies + "/generic-gpu-vm.json", "--root", kProxmox, "--fail-on", "warn",
                                "--junit", junit.string(), "--quiet"});
  EXPECT_EQ(strict.exit_code, 1) << strict.err;
  cases = read_junit(junit);
  for (const auto& id : not_passed)
    if (!cases.empty()) {
      EXPECT_EQ(cases[id], "failure") << id;
    }
  // The text output: one line per item, a summary line.
  // Wide enough that a renderer fitting text to the terminal keeps one line per item.
  auto text = run_interprobe({"check", "--policy", kPolicies + "/generic-gpu-vm.json", "--root", kProxmox, "--quiet"}, {"COLUMNS=1000"});
  EXPECT_EQ(text.exit_code, 1);
  std::istringstream lines(text.out);
  std::string line, clique_line;
  while (std::getline(lines, line) && clique_line.empty())
    if (line.find(" p2p-clique ") != std::string::npos) clique_line = line;
  EXPECT_EQ(clique_line.rfind("  FAIL ", 0), 0u) << text.out;
  // The reasons follow, one row per item that did not pass (none for the passes).
  const auto reasons = text.out.find("why, for the items that did not pass");
  ASSERT_NE(reasons, std::string::npos) << text.out;
  EXPECT_NE(text.out.find("p2p-clique           without the clique capability", reasons), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("probes-ran ", reasons), std::string::npos) << "a passed item has no reason row";
  EXPECT_NE(text.out.find("FAILED: 19 item(s)"), std::string::npos) << text.out;
  auto md = run_interprobe({"check", "--policy", kPolicies + "/generic-gpu-vm.json", "--root", kProxmox, "--quiet", "--format", "markdown"});
  EXPECT_NE(md.out.find("| **FAIL** | p2p-clique |"), std::string::npos) << md.out;
  fs::remove_all(dir);
}

TEST(CheckCli, BadPolicyIsExit2NamingFileItemAndKey) {
  auto dir = temp_dir();
  fs::path policy = dir / "site.json";
  std::ofstream(policy) << R"({"name": "site", "items": [{"id": "lat", "severity": "fail", "metric": "collective/nccl/8B/time_us", "op": "=<", "value": 30}]})";
  auto p = run_interprobe({"check", "--policy", policy.string(), kFixtures + "/seed-case/report.json"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find(policy.string()), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("item 1 (id \"lat\")"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("key \"op\""), std::string::npos) << p.err;
  EXPECT_TRUE(p.out.empty());
  // Bad before anything runs: no probe output, no JUnit file.
  fs::path junit = dir / "junit.xml";
  auto run = run_interprobe({"check", "--policy", policy.string(), "--root", kProxmox, "--junit", junit.string()});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_FALSE(fs::exists(junit));
  auto both = run_interprobe({"check", "--policy", kPolicies + "/hgx-h100.json", "--root", kProxmox, kFixtures + "/seed-case/report.json"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--root"), std::string::npos) << both.err;
  auto missing = run_interprobe({"check", "--policy", (dir / "nope.json").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.json"), std::string::npos) << missing.err;
  fs::remove_all(dir);
}

TEST(CheckCli, ListSubjectsShowsWhatItemsCanSelect) {
  auto p = run_interprobe({"check", "--list-subjects", kFixtures + "/seed-case/report.json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  for (const char* path : {"collective/nccl/8B/time_us", "virtualization/machine_type", "topology/gpus/0/numa_exposed"})
    EXPECT_NE(p.out.find(path), std::string::npos) << path;
  EXPECT_EQ(run_interprobe({"check", "--list-subjects"}).exit_code, 2);
  EXPECT_EQ(run_interprobe({"check", kFixtures + "/seed-case/report.json"}).exit_code, 2);  // no --policy
}

// Issue 36: a GPU VM preset never passes a machine without GPUs, whatever --fail-on says.
TEST(CheckCli, GenericVmPresetFailsAMachineWithoutGpusSayingWhy) {
  const std::string no_gpu = kFixtures + "/topology/live-firecracker-capture";
  for (const char* fail_on : {"fail", "warn"}) {
    auto p = run_interprobe({"check", "--policy", kPolicies + "/generic-gpu-vm.json", "--root", no_gpu, "--fail-on", fail_on,
                             "--quiet", "--json"});
    ASSERT_EQ(p.exit_code, 1) << fail_on << ": " << p.out << p.err;
    auto o = outcomes(nlohmann::json::parse(p.out));
    EXPECT_EQ(o["gpu-count"], "fail");
  }
  auto text = run_interprobe({"check", "--policy", kPolicies + "/generic-gpu-vm.json", "--root", no_gpu, "--quiet"}, {"COLUMNS=400"});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.out.find("a GPU VM without a GPU passes nothing"), std::string::npos) << text.out;
  // run's gate sees the finding too: the inventory alone exits 1 at --fail-on warn.
  auto run = run_interprobe({"run", "--root", no_gpu, "--only", "system,topology,virtualization", "--fail-on", "warn", "--quiet"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("gpu.none_on_bus"), std::string::npos) << run.out;
}

TEST(CheckCli, ExpectGpusFailsAShortCountAndPassesAFullOne) {
  auto dir = temp_dir();
  fs::path two = dir / "two.json", hgx = dir / "hgx.json";
  ASSERT_EQ(run_interprobe({"topo", "--root", kFixtures + "/topology/i440fx-guest", "-o", two.string(), "--quiet"}).exit_code, 0);
  ASSERT_EQ(run_interprobe({"topo", "--root", kFixtures + "/topology/hgx-h100-nvswitch", "-o", hgx.string(), "--quiet"}).exit_code, 0);
  // The generic preset asks for one GPU: two pass, until --expect-gpus 8 asks for eight.
  auto loose = run_interprobe({"check", "--policy", kPolicies + "/generic-gpu-vm.json", two.string(), "--json"});
  EXPECT_EQ(outcomes(nlohmann::json::parse(loose.out))["gpu-count"], "pass");
  auto short_count = run_interprobe({"check", "--policy", kPolicies + "/generic-gpu-vm.json", two.string(), "--expect-gpus", "8", "--json"});
  EXPECT_EQ(short_count.exit_code, 1) << short_count.err;
  auto j = nlohmann::json::parse(short_count.out);
  EXPECT_EQ(outcomes(j)["gpu-count"], "fail");
  for (const auto& item : j.at("items"))
    if (item.at("id") == "gpu-count") {
      EXPECT_EQ(item.at("threshold"), ">= 8") << item.dump();
    }
  auto full = run_interprobe({"check", "--policy", kPolicies + "/hgx-h100.json", hgx.string(), "--expect-gpus", "8", "--json"});
  EXPECT_EQ(outcomes(nlohmann::json::parse(full.out))["gpu-count"], "pass") << full.out;
  EXPECT_EQ(full.exit_code, 0) << full.out;
  // A policy without a gpu-count item gets one.
  fs::path bare = dir / "bare.json";
  std::ofstream(bare) << R"({"name":"bare","items":[{"id":"one","severity":"warn","finding":"probe.failed","expect":"absent"}]})";
  auto added = run_interprobe({"check", "--policy", bare.string(), two.string(), "--expect-gpus", "4", "--json"});
  EXPECT_EQ(added.exit_code, 1);
  EXPECT_EQ(outcomes(nlohmann::json::parse(added.out))["gpu-count"], "fail") << added.out;
  EXPECT_EQ(run_interprobe({"check", "--policy", bare.string(), two.string(), "--expect-gpus", "0"}).exit_code, 2);
  fs::remove_all(dir);
}

TEST(CheckCli, StrictFailsAGateThatWasNotMeasured) {
  auto dir = temp_dir();
  fs::path hgx = dir / "hgx.json";
  ASSERT_EQ(run_interprobe({"topo", "--root", kFixtures + "/topology/hgx-h100-nvswitch", "-o", hgx.string(), "--quiet"}).exit_code, 0);
  // p2p-verified (fail) needs a measured copy: skipped by default, a failure with --strict.
  auto lax = run_interprobe({"check", "--policy", kPolicies + "/hgx-h100.json", hgx.string(), "--json"});
  EXPECT_EQ(outcomes(nlohmann::json::parse(lax.out))["p2p-verified"], "skipped");
  EXPECT_EQ(lax.exit_code, 0);
  auto strict = run_interprobe({"check", "--policy", kPolicies + "/hgx-h100.json", hgx.string(), "--strict", "--json"});
  EXPECT_EQ(strict.exit_code, 1);
  auto j = nlohmann::json::parse(strict.out);
  auto o = outcomes(j);
  EXPECT_EQ(o["p2p-verified"], "fail");
  EXPECT_EQ(o["decode-not-comm-bound"], "skipped") << "a warn item does not gate at the default --fail-on";
  for (const auto& item : j.at("items"))
    if (item.at("id") == "p2p-verified") {
      EXPECT_NE(item.at("detail").get<std::string>().find("--strict"), std::string::npos) << item.dump();
    }
  fs::remove_all(dir);
}
