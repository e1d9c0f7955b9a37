// `interprobe allreduce --backend nccl` through the real binary against the simulated libcuda and
// libnccl (tests/sim): sums checked, transports captured from NCCL's log, variants, the watchdog.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "model/json.hpp"
#include "support/run_binary.hpp"

using interprobe::testing::run_interprobe;
namespace fs = std::filesystem;

namespace {

std::string write_description(const std::string& text) {
  char tmpl[] = "/tmp/interprobe-nccl-sim-XXXXXX";
  fs::path file = fs::path(::mkdtemp(tmpl)) / "machine.json";
  std::ofstream(file) << text;
  return file.string();
}

interprobe::testing::Process run_allreduce(const std::string& description, std::vector<std::string> extra) {
  std::vector<std::string> args = {"allreduce", "--backend", "nccl", "--sizes", "4K,256K", "--iters", "3",
                                   "--samples", "2", "--warmup", "1", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_interprobe(args, {std::string("INTERPROBE_CUDA_LIB=") + INTERPROBE_SIM_CUDA,
                               std::string("INTERPROBE_NCCL_LIB=") + INTERPROBE_SIM_NCCL,
                               "INTERPROBE_SIM_CONFIG=" + description});
}

const char* kFourGpus = R"({"devices": [{}, {}, {}, {}], "nccl": {"bus_gbps": 50, "latency_us": 40}})";

TEST(NcclSimulated, FourGpusInOneProcessSumCorrectlyInTheModelsTime) {
  auto p = run_allreduce(write_description(kFourGpus), {"--dtype", "float,half,bfloat16"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  ASSERT_TRUE(r.collective);
  ASSERT_EQ(r.collective->allreduce.size(), 3u);  // one sweep per dtype
  EXPECT_TRUE(r.tool.libraries.at("nccl").simulated);
  EXPECT_TRUE(r.tool.libraries.at("cuda").simulated);
  for (const auto& s : r.collective->allreduce) {
    EXPECT_EQ(s.status, interprobe::report::AllreduceStatus::complete) << s.reason.value_or("");
    EXPECT_EQ(s.ranks, 4);
    EXPECT_EQ(s.devices.size(), 4u);
    ASSERT_EQ(s.points.size(), 4u);  // 2 sizes x out-of-place, in-place
    for (const auto& pt : s.points) {
      EXPECT_EQ(pt.wrong_elements, 0) << to_string(s.dtype) << " " << pt.bytes;
      // The simulated ring: 40 us + 2(n-1)/n x bytes / 50 GB/s, at least.
      double model_us = 40 + 1.5 * static_cast<double>(pt.bytes) / 50e3;
      EXPECT_GE(pt.time_us, 0.95 * model_us) << pt.bytes;
    }
    ASSERT_EQ(s.transports.size(), 1u);
    EXPECT_EQ(s.transports[0].transport, "P2P/CUMEM");
  }
}

TEST(NcclSimulated, TheP2pOffVariantShowsTheSharedMemoryTransport) {
  auto p = run_allreduce(write_description(kFourGpus), {"--variant", "default,p2p-off"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  ASSERT_TRUE(r.collective);
  ASSERT_EQ(r.collective->allreduce.size(), 2u);
  for (const auto& s : r.collective->allreduce) {
    ASSERT_EQ(s.transports.size(), 1u) << to_string(s.variant);
    EXPECT_EQ(s.transports[0].transport, s.variant == interprobe::report::AllreduceVariant::p2p_off ? "SHM/direct/direct" : "P2P/CUMEM")
        << to_string(s.variant);
  }
}

TEST(NcclSimulated, AHungAllReduceIsAbortedByTheWatchdog) {
  auto p = run_allreduce(write_description(R"({"devices": [{}, {}], "nccl": {"hang": true}})"), {"--timeout", "1"});
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  ASSERT_TRUE(r.collective) << p.err;
  ASSERT_EQ(r.collective->allreduce.size(), 1u);
  const auto& s = r.collective->allreduce[0];
  EXPECT_EQ(s.status, interprobe::report::AllreduceStatus::hung);
  EXPECT_EQ(s.hung_at_bytes, 4096);
  EXPECT_NE(s.reason.value_or("").find("ncclCommAbort"), std::string::npos);
}

// A pageable cuMemcpyHtoD returns once staged and lands later on the legacy stream, which the
// all-reduce's non-blocking stream does not wait for: inputs must go on the all-reduce's own stream.
TEST(NcclSimulated, InputsLandBeforeTheAllReduceReadsThem) {
  auto p = run_allreduce(write_description(R"({"devices": [{}, {}], "driver": {"pageable_copy_lag_ms": 100}})"), {});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  ASSERT_TRUE(r.collective);
  ASSERT_EQ(r.collective->allreduce.size(), 1u);
  const auto& s = r.collective->allreduce[0];
  ASSERT_EQ(s.points.size(), 4u);
  for (const auto& pt : s.points) EXPECT_EQ(pt.wrong_elements, 0) << pt.bytes << (pt.in_place ? " in place" : " out of place");
  EXPECT_EQ(s.summary.wrong_elements_total, 0);
}

// NCCL's TUNING log writes a line per call: only the untimed connection and warm-up may log;
// the timed iterations (3 x 2 per placement here) run with NCCL_DEBUG=WARN.
TEST(NcclSimulated, TimedIterationsWriteNoNcclLogLines) {
  auto p = run_allreduce(write_description(kFourGpus), {"--dtype", "float,half"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  ASSERT_TRUE(r.collective);
  ASSERT_EQ(r.collective->allreduce.size(), 2u);
  for (const auto& s : r.collective->allreduce) {
    ASSERT_EQ(s.algorithms.size(), 2u) << to_string(s.dtype);  // both sizes seen in the warm-up, for each type
    for (const auto& a : s.algorithms) {
      // 4 KiB: the connecting call and 1 warm-up; 256 KiB: 1 warm-up. Logged timed calls would add 13.
      EXPECT_LE(a.calls, a.bytes == 4096 ? 2 : 1) << to_string(s.dtype) << " " << a.bytes;
      EXPECT_GE(a.calls, 1);
    }
    ASSERT_EQ(s.transports.size(), 1u);
    bool said = false;
    for (const auto& n : s.notes) said = said || n.find("NCCL_DEBUG=WARN") != std::string::npos;
    EXPECT_TRUE(said) << to_string(s.dtype);
  }
}

TEST(NcclSimulated, ADriverOlderThanCuda12_0IsUnsupported) {
  auto p = run_allreduce(write_description(R"({"driver_version": 11080, "devices": [{}, {}]})"), {});
  EXPECT_EQ(p.exit_code, 4) << p.err;
  EXPECT_NE(p.err.find("CUDA 12.0 (driver r525)"), std::string::npos) << p.err;
}

}  // namespace

// `collectives` on the simulated NCCL (simulated, not run on a GPU): all_gather, reduce_scatter
// and broadcast through their NCCL calls, alltoall and sendrecv as grouped ncclSend/ncclRecv;
// every result checked, busbw = algbw x nccl-tests' factor, no faster than the model's time.
TEST(NcclSimulated, EveryCollectiveOnFourGpusIsCheckedWithItsBusFactorInTheModelsTime) {
  using interprobe::report::CollectiveOp;
  auto p = run_interprobe({"collectives", "--backend", "nccl", "--ops", "all_gather,reduce_scatter,alltoall,broadcast,sendrecv",
                           "--sizes", "4K,256K", "--iters", "3", "--samples", "2", "--warmup", "1", "--dtype", "float,bfloat16",
                           "--json"},
                          {std::string("INTERPROBE_CUDA_LIB=") + INTERPROBE_SIM_CUDA, std::string("INTERPROBE_NCCL_LIB=") + INTERPROBE_SIM_NCCL,
                           "INTERPROBE_SIM_CONFIG=" + write_description(kFourGpus)});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  ASSERT_TRUE(r.collective);
  ASSERT_EQ(r.collective->sweeps.size(), 10u);  // 5 ops x 2 types
  for (const auto& s : r.collective->sweeps) {
    const std::string op = to_string(s.collective);
    EXPECT_EQ(s.status, interprobe::report::AllreduceStatus::complete) << op << ": " << s.reason.value_or("");
    EXPECT_EQ(s.ranks, 4);
    const bool in_place = s.collective != CollectiveOp::alltoall && s.collective != CollectiveOp::sendrecv;
    ASSERT_EQ(s.points.size(), in_place ? 4u : 2u) << op;
    const double factor = s.collective == CollectiveOp::broadcast || s.collective == CollectiveOp::sendrecv ? 1.0 : 0.75;
    for (const auto& pt : s.points) {
      EXPECT_EQ(pt.wrong_elements, 0) << op << " " << to_string(s.dtype) << " " << pt.bytes;
      EXPECT_NEAR(pt.busbw_gbps, pt.algbw_gbps * factor, 1e-12) << op;
      // The simulated model: 40 us + bus bytes / 50 GB/s, at least.
      EXPECT_GE(pt.time_us, 0.95 * (40 + factor * static_cast<double>(pt.bytes) / 50e3)) << op << " " << pt.bytes;
    }
  }
}
