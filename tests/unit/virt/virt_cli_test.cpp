// `interprobe virt` end to end: exit codes, JSON, schema, the malformed cpuid.txt policy, speed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "support/run_binary.hpp"

namespace {

using interprobe::testing::run_interprobe;
namespace fs = std::filesystem;

std::string fixture(const std::string& name) { return std::string(INTERPROBE_FIXTURES) + "/virt/" + name; }

TEST(VirtCli, JsonOnAFixture) {
  auto p = run_interprobe({"virt", "--root", fixture("proxmox-kvm-q35"), "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto j = nlohmann::json::parse(p.out);
  const auto& v = j.at("virtualization");
  EXPECT_EQ(v.at("hypervisor"), "kvm");
  EXPECT_EQ(v.at("product"), "Proxmox VE");
  EXPECT_EQ(v.at("machine_version"), "pc-q35-8.1");
  EXPECT_EQ(v.at("gpus").size(), 2u);
  bool clique_finding = false;
  for (const auto& f : j.at("findings")) clique_finding = clique_finding || f.at("id") == "virt.p2p_clique_missing";
  EXPECT_TRUE(clique_finding);
  EXPECT_EQ(j.at("probes").at(0).at("name"), "virtualization");
}

TEST(VirtCli, TextShowsVerdictAndEvidence) {
  auto p = run_interprobe({"virt", "--root", fixture("firecracker-docker-bhyve"), "--no-color"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("bhyve (medium confidence)"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("docker"), std::string::npos);
  EXPECT_NE(p.out.find("Firecracker"), std::string::npos);
  EXPECT_NE(p.out.find("FIRECK"), std::string::npos);
}

// A malformed cpuid.txt costs the CPUID family only: the report comes out with the warning in
// the evidence, and the run still ends with exit 2 naming the file and line (an input error).
TEST(VirtCli, MalformedCpuidTxtIsAWarningInTheReportAndExit2) {
  auto p = run_interprobe({"virt", "--root", fixture("malformed"), "--json"});
  ASSERT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("cpuid.txt:1"), std::string::npos) << p.err;
  auto j = nlohmann::json::parse(p.out);
  bool warned = false;
  for (const auto& e : j.at("virtualization").at("evidence"))
    if (e.at("source") == "cpuid") warned = e.at("implies").get<std::string>().rfind("warning:", 0) == 0 &&
                                            e.at("value").get<std::string>().find("cpuid.txt:1") != std::string::npos;
  EXPECT_TRUE(warned) << p.out;
}

TEST(VirtCli, EveryFixtureReportValidatesAgainstTheSchema) {
  std::string python = INTERPROBE_PYTHON3;
  if (python.empty() || std::system((python + " -c 'import jsonschema' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "python3-jsonschema not installed";
  fs::path dir = fs::temp_directory_path() / ("interprobe-virt-schema-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string files;
  for (const auto& entry : fs::directory_iterator(std::string(INTERPROBE_FIXTURES) + "/virt")) {
    if (!entry.is_directory()) continue;
    auto out = dir / (entry.path().filename().string() + ".json");
    int expected = entry.path().filename() == "malformed" ? 2 : 0;  // its cpuid.txt is broken
    ASSERT_EQ(run_interprobe({"virt", "--root", entry.path().string(), "-q", "-o", out.string()}).exit_code, expected)
        << entry.path();
    // A run that ends in an error leaves -o alone and keeps its report beside it.
    files += " " + out.string() + (expected == 2 ? ".partial" : "");
  }
  auto live = dir / "live.json";
  ASSERT_EQ(run_interprobe({"virt", "-q", "-o", live.string()}).exit_code, 0);
  files += " " + live.string();
  std::string cmd = python + " " + INTERPROBE_SOURCE_DIR + "/tests/cli/validate_report.py " + INTERPROBE_SOURCE_DIR +
                    "/report/schema/report.schema.json" + files;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  fs::remove_all(dir);
}

TEST(VirtCli, ReportReRendersTheSection) {
  fs::path out = fs::temp_directory_path() / ("interprobe-virt-" + std::to_string(::getpid()) + ".json");
  ASSERT_EQ(run_interprobe({"virt", "--root", fixture("hyperv-azure"), "-q", "-o", out.string()}).exit_code, 0);
  auto p = run_interprobe({"report", out.string(), "--no-color"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("hyperv_vpci"), std::string::npos) << p.out;
  fs::remove(out);
}

TEST(VirtCli, LiveRunOpensNoVendorLibraryForTheHeader) {
  // Opening NCCL/cuBLASLt/CUDA costs ~0.5 s; `virt` must not pay it (its 50 ms budget, docs/virt.md).
  auto p = run_interprobe({"virt", "-q", "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto j = nlohmann::json::parse(p.out);
  EXPECT_TRUE(j.at("tool").at("libraries").empty());
  EXPECT_FALSE(j.at("tool").at("libraries_not_probed").is_null());
  EXPECT_EQ(j.at("virtualization").at("hypervisor").get<std::string>().empty(), false);
}

// The acceptance check: on any machine with systemd-detect-virt, the verdicts are the same.
std::optional<std::string> systemd_detect_virt(const char* flag) {
  if (!fs::exists("/usr/bin/systemd-detect-virt")) return std::nullopt;
  std::string cmd = std::string("/usr/bin/systemd-detect-virt ") + flag + " 2>/dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return std::nullopt;
  char buffer[128] = {};
  std::string out = std::fgets(buffer, sizeof buffer, pipe) ? buffer : "";
  ::pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (out.empty()) return std::nullopt;
  return out;
}

TEST(VirtCli, LiveVerdictEqualsSystemdDetectVirt) {
  auto vm = systemd_detect_virt("--vm"), container = systemd_detect_virt("--container");
  if (!vm || !container) GTEST_SKIP() << "systemd-detect-virt not installed";
  auto p = run_interprobe({"virt", "-q", "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto v = nlohmann::json::parse(p.out).at("virtualization");
  EXPECT_EQ(v.at("hypervisor"), *vm);
  EXPECT_EQ(v.at("container"), *container);
  EXPECT_GE(v.at("evidence").size(), 3u);
}

}  // namespace
