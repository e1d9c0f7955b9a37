// What runs without a GPU of the NCCL backend: the log parser, variants and their environment,
// and the child process that measures a further variant.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>

#include "probes/collective/child_process.hpp"
#include "probes/collective/nccl_environment.hpp"
#include "probes/collective/nccl_log.hpp"
#include "common/errors.hpp"
#include "common/interrupt.hpp"

namespace ic = interprobe::collective;

// Lines in the formats of NCCL 2.18-2.28 (INIT, TUNING); the rest must be skipped.
constexpr const char* kLog = R"(gpu01:4711:4711 [0] NCCL INFO NCCL version 2.28.9+cuda13.0
gpu01:4711:4720 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
gpu01:4711:4720 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read
gpu01:4711:4721 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/direct pointer
gpu01:4711:4721 [1] NCCL INFO Channel 00 : 1[4000] -> 2[5000] via SHM/direct/direct
gpu01:4711:4722 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/0
gpu01:4711:4711 [0] NCCL INFO Connected all rings
gpu01:4711:4711 [0] NCCL INFO AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}
gpu01:4711:4711 [0] NCCL INFO AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}
gpu01:4711:4711 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo NVLS proto Simple channel{Lo..Hi}={0..15}
gpu01:4711:4711 [0] NCCL INFO Broadcast: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}
gpu01:4711:4730 [0] misc/socket.cc:50 NCCL WARN socket: connection refused
garbage line with via in it
)";

TEST(NcclLog, TransportsAlgorithmsVersionAndWarnings) {
  ic::NcclLogSummary s;
  ic::parse_nccl_log(kLog, s);
  EXPECT_EQ(s.version, "2.28.9+cuda13.0");
  EXPECT_EQ(s.transports.at("P2P/CUMEM/read"), 2);
  EXPECT_EQ(s.transports.at("P2P/direct pointer"), 1);
  EXPECT_EQ(s.transports.at("SHM/direct/direct"), 1);
  EXPECT_EQ(s.transports.at("NET/Socket/0"), 1);
  EXPECT_EQ(s.transports.size(), 4u);
  auto algorithms = ic::algorithms_of(s);
  ASSERT_EQ(algorithms.size(), 2u);  // Broadcast is not an all-reduce
  EXPECT_EQ(algorithms[0].bytes, 8);
  EXPECT_EQ(algorithms[0].algorithm, "RING");
  EXPECT_EQ(algorithms[0].calls, 2);
  EXPECT_EQ(algorithms[1].algorithm, "NVLS");
  EXPECT_EQ(algorithms[1].protocol, "Simple");
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0].rfind("NCCL WARN socket", 0), 0u);
}

TEST(NcclLog, ParsingIsCumulative) {
  ic::NcclLogSummary s;
  ic::parse_nccl_log("h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n", s);
  ic::parse_nccl_log("h:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/IPC\n", s);
  EXPECT_EQ(ic::transports_of(s).at(0).connections, 2);
}

TEST(NcclVariants, NamesAndTheirEnvironment) {
  using interprobe::report::AllreduceVariant;
  EXPECT_TRUE(ic::variant_environment(AllreduceVariant::default_).empty());
  EXPECT_EQ(ic::variant_environment(AllreduceVariant::p2p_off).at("NCCL_P2P_DISABLE"), "1");
  EXPECT_EQ(ic::variant_environment(AllreduceVariant::shm_off).at("NCCL_SHM_DISABLE"), "1");
  EXPECT_THROW(ic::parse_variant_list("nvls-off"), interprobe::InputError);
  // The command line keeps its spelling; the report writes p2p_off, which the command line refuses.
  EXPECT_EQ(ic::parse_variant_list("default, P2P-OFF,default"),
            (std::vector<AllreduceVariant>{AllreduceVariant::default_, AllreduceVariant::p2p_off}));
  EXPECT_THROW(ic::parse_variant_list("p2p_off"), interprobe::InputError);
  EXPECT_STREQ(ic::cli_name(AllreduceVariant::shm_off), "shm-off");
  EXPECT_STREQ(interprobe::report::to_string(AllreduceVariant::shm_off), "shm_off");
}

TEST(NcclVariants, ScopedEnvironmentRestores) {
  ::setenv("NCCL_SHM_DISABLE", "0", 1);
  ::unsetenv("NCCL_P2P_DISABLE");
  {
    ic::ScopedEnvironment env({{"NCCL_P2P_DISABLE", "1"}, {"NCCL_SHM_DISABLE", "1"}});
    EXPECT_STREQ(std::getenv("NCCL_P2P_DISABLE"), "1");
    EXPECT_STREQ(std::getenv("NCCL_SHM_DISABLE"), "1");
    auto in_force = ic::nccl_environment_in_force();
    EXPECT_EQ(in_force.at("NCCL_P2P_DISABLE"), "1");
  }
  EXPECT_EQ(std::getenv("NCCL_P2P_DISABLE"), nullptr);
  EXPECT_STREQ(std::getenv("NCCL_SHM_DISABLE"), "0");
  ::unsetenv("NCCL_SHM_DISABLE");
}

TEST(ChildProcess, PassesEnvironmentAndArgumentsWithoutAShell) {
  auto r = ic::run_child("/usr/bin/env", {}, {{"INTERPROBE_CHILD_TEST", "a b;$(x)"}}, 10);
  EXPECT_EQ(r.exit_code, 0) << r.error;
  EXPECT_NE(r.out.find("INTERPROBE_CHILD_TEST=a b;$(x)\n"), std::string::npos);
  auto echo = ic::run_child("/bin/echo", {"; rm -rf /", "$HOME"}, {}, 10);
  EXPECT_EQ(echo.out, "; rm -rf / $HOME\n");
}

// `kill -INT` of interprobe alone (as `timeout -s INT` in scripts/gpu-check sends it) must not
// leave a variant's child running to its own limit: the request is passed on to the child.
TEST(ChildProcess, AnInterruptIsPassedOnToTheChild) {
  interprobe::request_interrupt();
  const auto started = std::chrono::steady_clock::now();
  auto slept = ic::run_child("/bin/sleep", {"30"}, {}, 60);
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  interprobe::clear_interrupt();
  EXPECT_FALSE(slept.timed_out);
  EXPECT_EQ(slept.exit_code, 128 + SIGINT);
  EXPECT_LT(took_s, 10.0);
}

TEST(ChildProcess, TimeoutKillsAndMissingProgramIsAnError) {
  auto slow = ic::run_child("/bin/sleep", {"30"}, {}, 0.3);
  EXPECT_TRUE(slow.timed_out);
  EXPECT_EQ(slow.exit_code, 128 + 9);
  auto missing = ic::run_child("/nonexistent/interprobe", {}, {}, 5);
  EXPECT_NE(missing.exit_code, 0);
}
