// `interprobe bw --engine cuda` through the real binary against the simulated libcuda
// (tests/sim): control flow, the version policy, and numbers that follow the simulated links.
#include <gtest/gtest.h>

#include <chrono>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "model/json.hpp"
#include "support/run_binary.hpp"

namespace report = interprobe::report;
using interprobe::testing::run_interprobe;
namespace fs = std::filesystem;

namespace {

std::string device_file(const std::string& name) { return std::string(INTERPROBE_SIM_DEVICES) + "/" + name; }

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

std::string write_temp(const std::string& name, const std::string& text) {
  char tmpl[] = "/tmp/interprobe-sim-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  std::ofstream(dir / name) << text;
  return (dir / name).string();
}

std::vector<std::string> sim_env(const std::string& description) {
  return {std::string("INTERPROBE_CUDA_LIB=") + INTERPROBE_SIM_CUDA, "INTERPROBE_SIM_CONFIG=" + description};
}

interprobe::testing::Process run_bw(const std::string& description, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"bw", "--engine", "cuda", "--quick", "--sizes", "64K,8M", "--budget", "0.05", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  // A hang (e.g. a hold kernel left spinning after a driver error) fails here, named, instead of
  // running into CTest's timeout.
  interprobe::testing::RunLimits limits;
  limits.time = std::chrono::seconds(120);
  auto p = run_interprobe(args, sim_env(description), limits);
  EXPECT_FALSE(p.timed_out) << "bw against the simulator did not finish within 120 s: " << p.err;
  return p;
}

// The report of a run that must succeed (a failed run adds a failure and gives an empty report).
interprobe::report::Report report_of(const std::string& description) {
  auto p = run_bw(description);
  EXPECT_EQ(p.exit_code, 0) << p.err;
  if (p.exit_code != 0) return {};
  return interprobe::report::parse_report_text(p.out, "stdout");
}

// GB/s the link model gives for one copy of `bytes` (what the engine should measure).
double model_gbps(const nlohmann::json& link, double bytes, int directions) {
  double seconds = link.at("latency_us").get<double>() * 1e-6 + bytes / (link.at("gbps").get<double>() * 1e9);
  return directions * bytes / seconds / 1e9;
}

const char* link_of(const std::string& kind) {
  if (kind == "h2d" || kind == "d2h") return "host";
  if (kind == "p2p_off") return "staged";
  return "peer";  // p2p_write_ce
}

// Every point of every sweep within 10% of the description's link model.
void expect_rates_follow_the_model(const interprobe::report::Report& r, const nlohmann::json& description) {
  ASSERT_TRUE(r.bandwidth);
  ASSERT_FALSE(r.bandwidth->sweeps.empty());
  for (const auto& s : r.bandwidth->sweeps) {
    ASSERT_EQ(s.status, report::SweepStatus::complete) << to_string(s.kind) << " " << s.reason.value_or("");
    const auto& link = description.at("links").at(link_of(to_string(s.kind)));
    for (const auto& p : s.points) {
      double want = model_gbps(link, static_cast<double>(p.bytes), static_cast<int>(s.directions));
      EXPECT_NEAR(p.gbps, want, 0.10 * want) << to_string(s.kind) << " " << s.src << "->" << s.dst << " at " << p.bytes << " B";
    }
  }
}

TEST(BwSimulated, H100NvSwitchEveryPairIsP2pAtTheModelsRates) {
  auto file = device_file("h100-sxm-8x-nvswitch.json");
  auto r = report_of(file);
  ASSERT_TRUE(r.bandwidth);
  ASSERT_TRUE(r.tool.libraries.count("cuda"));
  EXPECT_TRUE(r.tool.libraries.at("cuda").simulated) << "a simulated run must say so";
  EXPECT_EQ(r.tool.libraries.at("cuda").version, "12.4");
  expect_rates_follow_the_model(r, read_json(file));
  EXPECT_EQ(r.bandwidth->p2p_pairs.size(), 28u);  // 8 GPUs, each pair once
  for (const auto& t : r.bandwidth->p2p_pairs) EXPECT_EQ(t.truth, report::P2pTruth::p2p) << t.src << "->" << t.dst << ": " << t.reason;
  for (const auto& s : r.bandwidth->sweeps)
    for (const auto& pt : s.points) EXPECT_EQ(pt.verified, true) << to_string(s.kind);  // no fault: every copy intact
}

TEST(BwSimulated, KvmGuestWithP2pOffIsStaged) {
  auto file = device_file("rtx-pro-6000-8x-kvm-p2p-off.json");
  auto r = report_of(file);
  ASSERT_TRUE(r.bandwidth);
  expect_rates_follow_the_model(r, read_json(file));
  ASSERT_EQ(r.bandwidth->p2p_pairs.size(), 28u);
  for (const auto& t : r.bandwidth->p2p_pairs) {
    EXPECT_EQ(t.truth, report::P2pTruth::staged) << t.src << "->" << t.dst;
    EXPECT_FALSE(t.peer_access_claimed);
  }
  for (const auto& s : r.bandwidth->sweeps) EXPECT_NE(s.kind, report::CopyKind::p2p_write_ce) << "no peer access: no direct path";
}

TEST(BwSimulated, CorruptPeerCopiesFailVerificationExactlyOnTheDirectPath) {
  auto file = device_file("a100-pcie-2x-p2p-corrupt.json");
  auto r = report_of(file);
  ASSERT_TRUE(r.bandwidth);
  ASSERT_EQ(r.bandwidth->p2p_pairs.size(), 1u);
  EXPECT_EQ(r.bandwidth->p2p_pairs[0].truth, report::P2pTruth::corrupt) << r.bandwidth->p2p_pairs[0].reason;
  int direct = 0;
  for (const auto& s : r.bandwidth->sweeps) {
    bool faulty = s.kind == report::CopyKind::p2p_write_ce;
    direct += faulty;
    for (const auto& pt : s.points) EXPECT_EQ(pt.verified, !faulty) << to_string(s.kind) << " at " << pt.bytes;
  }
  EXPECT_EQ(direct, 1);
}

TEST(BwSimulated, PeerAccessClaimedButSlowAsStagingIsClaimedButStaged) {
  auto file = write_temp("claimed.json", R"({
    "driver_version": 12040, "devices": [{}, {}], "peer_access": "all",
    "links": {"peer": {"gbps": 9, "latency_us": 15}, "staged": {"gbps": 10, "latency_us": 15}}})");
  auto r = report_of(file);
  ASSERT_TRUE(r.bandwidth);
  ASSERT_EQ(r.bandwidth->p2p_pairs.size(), 1u);
  EXPECT_EQ(r.bandwidth->p2p_pairs[0].truth, report::P2pTruth::claimed_but_staged) << r.bandwidth->p2p_pairs[0].reason;
  EXPECT_TRUE(r.bandwidth->p2p_pairs[0].peer_access_claimed);
}

TEST(BwSimulated, AnUncorrectableEccErrorFailsTheSweepsWithTheDriversError) {
  auto p = run_bw(write_temp("ecc.json", R"({"devices": [{}], "faults": {"ecc_error": true}})"));
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  ASSERT_TRUE(r.bandwidth) << p.err;
  ASSERT_FALSE(r.bandwidth->sweeps.empty());
  for (const auto& s : r.bandwidth->sweeps) {
    EXPECT_EQ(s.status, report::SweepStatus::failed) << to_string(s.kind);
    EXPECT_NE(s.reason.value_or("").find("CUDA_ERROR_ECC_UNCORRECTABLE"), std::string::npos) << s.reason.value_or("");
  }
}

TEST(BwSimulated, OneL4BehindACuda12_2DriverLoadsTheIsa8_0Kernels) {
  auto file = device_file("l4-1x-cuda-12.2.json");
  auto r = report_of(file);
  ASSERT_TRUE(r.bandwidth);
  EXPECT_EQ(r.tool.libraries.at("cuda").version, "12.2");
  expect_rates_follow_the_model(r, read_json(file));
  bool noted = false;
  for (const auto& n : r.bandwidth->engines.at(0).notes) noted |= n.find("P2P needs two GPUs: 1 found") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_TRUE(r.bandwidth->p2p_pairs.empty());
}

TEST(BwSimulated, ACuda12_0DriverRunsAnd11_8ExitsFourNamingBothVersions) {
  auto ok = run_bw(write_temp("r525.json", R"({"driver_version": 12000, "devices": [{}]})"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  auto old = run_bw(device_file("driver-cuda-11.8-too-old.json"));
  EXPECT_EQ(old.exit_code, 4) << old.err;
  EXPECT_NE(old.err.find("CUDA 11.8"), std::string::npos) << old.err;
  EXPECT_NE(old.err.find("CUDA 12.0 (driver r525)"), std::string::npos) << old.err;
  auto r = interprobe::report::parse_report_text(old.out, "stdout");
  ASSERT_TRUE(r.bandwidth);
  EXPECT_EQ(r.bandwidth->engines.at(0).status, report::EngineStatus::unsupported);
}

TEST(BwSimulated, NoDriverLibraryOrAnUnreadableDescriptionIsUnsupportedNotACrash) {
  auto none = run_interprobe({"bw", "--engine", "cuda", "--quick", "--json"},
                             {"INTERPROBE_CUDA_LIB=/nonexistent/libcuda.so.1"});
  EXPECT_EQ(none.exit_code, 4) << none.err;
  EXPECT_NE(none.err.find("no CUDA driver"), std::string::npos) << none.err;
  auto broken = run_bw("/nonexistent/description.json");
  EXPECT_EQ(broken.exit_code, 4) << broken.err;
  EXPECT_NE(broken.err.find("/nonexistent/description.json"), std::string::npos) << broken.err;
}

TEST(BwSimulated, TheTextReportSaysTheDriverIsSimulated) {
  auto p = run_interprobe({"bw", "--engine", "cuda", "--sizes", "64K", "--budget", "0.02", "--verbose"},
                          sim_env(device_file("l4-1x-cuda-12.2.json")));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("SIMULATED (interprobe-sim"), std::string::npos) << p.out;
}

}  // namespace
