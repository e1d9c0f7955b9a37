// `interprobe bw` through the real binary: exit codes, messages, JSON, schema, Ctrl-C.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "model/json.hpp"
#include "support/run_binary.hpp"
#include "support/schema_check.hpp"

using interprobe::testing::run_interprobe;
using interprobe::testing::expect_schema_valid;
namespace fs = std::filesystem;
namespace report = interprobe::report;

namespace {

fs::path temp_dir() {
  char tmpl[] = "/tmp/interprobe-bw-XXXXXX";
  return ::mkdtemp(tmpl);
}

}  // namespace

TEST(BwCli, BadInputExitsTwoNamingTheOption) {
  struct Case {
    std::vector<std::string> args;
    const char* names;
  } cases[] = {{{"--min", "0"}, "--min"},       {{"--min", "1M", "--max", "4K"}, "--max"},
               {{"--max", "2X"}, "--max"},      {{"--engine", "rdma"}, "--engine"},
               {{"--sizes", "4,1Y"}, "--sizes"}, {{"--factor", "0.5"}, "--factor"},
               {{"--target-cv", "abc"}, "--target-cv"}, {{"--threads", "0"}, "--threads"},
               {{"--pages", "1g"}, "--pages"},  {{"--passes", "0"}, "--passes"},
               {{"--passes", "17"}, "--passes"}, {{"--memory", "pinned"}, "--memory"}};
  for (const auto& c : cases) {
    std::vector<std::string> args = {"bw", "--engine", "host"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto p = run_interprobe(args);
    EXPECT_EQ(p.exit_code, 2) << c.names << ": " << p.err;
    EXPECT_NE(p.err.find(c.names), std::string::npos) << p.err;
  }
}

TEST(BwCli, CudaWithoutAGpuExitsFourWithTheReason) {
  auto p = run_interprobe({"bw", "--engine", "cuda", "--quick", "--json"});
  if (p.exit_code == 0) GTEST_SKIP() << "a usable GPU is present";
  EXPECT_EQ(p.exit_code, 4) << p.err;
  EXPECT_TRUE(p.err.find("CUDA driver") != std::string::npos || p.err.find("cuInit") != std::string::npos) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  ASSERT_TRUE(r.bandwidth);
  ASSERT_EQ(r.bandwidth->engines.size(), 1u);
  EXPECT_EQ(r.bandwidth->engines[0].status, report::EngineStatus::unsupported);
  EXPECT_TRUE(r.bandwidth->engines[0].reason);
}

TEST(BwCli, HostSweepsWriteAValidReportWithFits) {
  auto dir = temp_dir();
  auto file = dir / "bw.json";
  auto p = run_interprobe({"bw", "--engine", "all", "--sizes", "1,4K,1M,3M", "--budget", "0.02", "-o", file.string(), "-q"});
  ASSERT_EQ(p.exit_code, 0) << p.err;  // cuda unsupported is data when host ran
  auto r = interprobe::report::read_report_file(file);
  ASSERT_TRUE(r.bandwidth);
  EXPECT_EQ(r.bandwidth->plan, report::BandwidthPlan::custom);
  ASSERT_GE(r.bandwidth->sweeps.size(), 3u);
  for (const auto& s : r.bandwidth->sweeps) {
    if (s.status == report::SweepStatus::unsupported) continue;  // locked memory refused by the environment
    EXPECT_EQ(s.engine, report::BandwidthEngine::host);
    ASSERT_EQ(s.points.size(), 4u) << to_string(s.kind);
    EXPECT_TRUE(s.fit) << to_string(s.kind);
    for (const auto& pt : s.points) EXPECT_EQ(pt.verified, true) << to_string(s.kind) << " " << pt.bytes;
  }
  EXPECT_EQ(r.bandwidth->engines.front().engine, report::BandwidthEngine::host);
  EXPECT_EQ(r.bandwidth->engines.front().status, report::EngineStatus::ok);
  // The host's measured cycle: between 0.1 ns (10 GHz) and 2 ns (500 MHz) on any CPU we run on.
  ASSERT_TRUE(r.bandwidth->engines.front().cycle_ns);
  EXPECT_GT(*r.bandwidth->engines.front().cycle_ns, 0.1);
  EXPECT_LT(*r.bandwidth->engines.front().cycle_ns, 2.0);
  expect_schema_valid(file);
  fs::remove_all(dir);
}

TEST(BwCli, ReplayedTreeMeasuresNothing) {
  auto p = run_interprobe({"bw", "--engine", "host", "--root", std::string(INTERPROBE_FIXTURES) + "/minimal-kvm-guest"});
  EXPECT_EQ(p.exit_code, 4);
  EXPECT_NE(p.err.find("live machine"), std::string::npos) << p.err;
}

TEST(BwCli, CtrlCKeepsTheFinishedSizes) {
  auto dir = temp_dir();
  auto file = dir / "partial.json";
  pid_t pid = ::fork();
  if (pid == 0) {
    std::string binary = INTERPROBE_BINARY, out = file.string();
    std::vector<std::string> args = {binary, "bw", "--engine", "host", "--min", "4K", "--max", "64M",
                                     "--budget", "0.3", "-o", out, "-q"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::freopen("/dev/null", "w", stdout);
    ::execv(binary.c_str(), argv.data());
    std::_Exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 130);
  auto r = interprobe::report::read_report_file(file);
  ASSERT_TRUE(r.bandwidth);
  ASSERT_FALSE(r.bandwidth->sweeps.empty());
  const auto& last = r.bandwidth->sweeps.back();
  EXPECT_EQ(last.status, report::SweepStatus::interrupted);
  std::size_t finished = 0;
  for (const auto& s : r.bandwidth->sweeps) finished += s.points.size();
  EXPECT_GT(finished, 0u);  // 2.5 s is enough for the first pass of some sizes (64 MiB buffers fault in quickly)
  for (const auto& s : r.bandwidth->sweeps)
    for (const auto& pt : s.points) EXPECT_GE(pt.samples, 2);  // only finished sizes are kept
  expect_schema_valid(file);
  fs::remove_all(dir);
}
