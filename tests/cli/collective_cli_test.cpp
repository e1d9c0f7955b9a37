// `interprobe allreduce` and the collective probe of `run`, through the real binary; the MPI
// backend under mpirun as CI runs it (skipped when this build has no mpirun).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "model/json.hpp"
#include "support/mpiexec.hpp"
#include "support/run_binary.hpp"
#include "support/schema_check.hpp"
#include "support/sanitizers.hpp"

using interprobe::testing::Launch;
using interprobe::testing::run_interprobe;
namespace fs = std::filesystem;

namespace {

using interprobe::testing::kMpiexec;

Launch mpiexec(const std::vector<std::string>& args, double limit_s = 180) {
  return interprobe::testing::mpiexec(kMpiexec, args, limit_s);
}

// The NVIDIA driver's control device: without it no GPU can be used.
bool have_gpu() { return fs::exists("/dev/nvidiactl"); }

}  // namespace

TEST(AllreduceCli, BadInputIsExitTwoNamingTheOption) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"allreduce", "--backend", "mpi", "--min", "0"}, "--min 0"},
      {{"allreduce", "--backend", "mpi", "--min", "1M", "--max", "1K"}, "--max"},
      {{"allreduce", "--backend", "mpi", "--max", "64Q"}, "unknown suffix"},
      {{"allreduce", "--backend", "gloo"}, "--backend 'gloo'"},
      {{"allreduce", "--backend", "mpi", "--dtype", "double"}, "--dtype 'double'"},
      {{"allreduce", "--variant", "p2p"}, "--variant 'p2p'"},
      {{"allreduce", "--backend", "mpi", "--sizes", "1,2", "--dtype", "float"}, "smaller than one float element"},
      {{"allreduce", "--backend", "mpi", "--variant", "p2p-off", "--max", "64"}, "NCCL settings"},
      {{"allreduce", "--sizes", "8", "--min", "16"}, "--min"},
  };
  for (const auto& [args, needle] : cases) {
    auto p = run_interprobe(args);
    EXPECT_EQ(p.exit_code, 2) << args.back() << "\n" << p.err;
    EXPECT_NE(p.err.find(needle), std::string::npos) << p.err;
  }
}

TEST(AllreduceCli, NcclWithoutAGpuExitsFourWithTheReason) {
  if (have_gpu()) GTEST_SKIP() << "this machine has a GPU";
  auto p = run_interprobe({"allreduce", "--backend", "nccl", "--max", "64K", "--json"});
  EXPECT_EQ(p.exit_code, 4) << p.err;
  EXPECT_NE(p.err.find("collective cannot run here"), std::string::npos) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  ASSERT_NE(r.probe("collective"), nullptr);
  EXPECT_EQ(r.probe("collective")->status, interprobe::report::ProbeStatus::unsupported);
  EXPECT_FALSE(r.probe("collective")->reason.value_or("").empty());
}

TEST(AllreduceCli, RunRecordsTheCollectiveProbeUnsupportedWithoutGpus) {
  if (have_gpu()) GTEST_SKIP() << "this machine has a GPU";
  // Only the collective probe: what the others measure has tests of its own (a whole run took 80 s).
  auto p = run_interprobe({"run", "--only", "collective", "--json", "-q"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  const auto* probe = r.probe("collective");
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe->status, interprobe::report::ProbeStatus::unsupported);
  EXPECT_NE(probe->reason.value_or("").find("mpirun -np N interprobe run"), std::string::npos);
  EXPECT_LT(probe->duration_s, 5.0);  // `run` stays fast: no MPI start, no sweep
}

TEST(AllreduceMpi, TwoRanksTwentyFourSizesBusbwFormulaNoWrongRankZeroAlonePrints) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  auto dir = fs::temp_directory_path() / ("interprobe-mpi-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto p = mpiexec({"-np", "2", INTERPROBE_BINARY, "allreduce", "--backend", "mpi", "--min", "8", "--max", "64M", "--json"});
  std::cout << "mpirun -np 2 ... --max 64M took " << p.seconds << " s\n";
  ASSERT_EQ(p.exit_code, 0) << p.err;
  // One JSON document: a second rank printing would make it unparseable.
  auto r = interprobe::report::parse_report_text(p.out, "stdout of mpirun");
  ASSERT_TRUE(r.collective);
  ASSERT_EQ(r.collective->allreduce.size(), 1u);
  const auto& s = r.collective->allreduce[0];
  EXPECT_EQ(s.backend, interprobe::report::AllreduceBackend::mpi);
  EXPECT_EQ(s.ranks, 2);
  EXPECT_EQ(s.status, interprobe::report::AllreduceStatus::complete);
  std::set<std::int64_t> sizes;
  for (const auto& point : s.points) {
    sizes.insert(point.bytes);
    EXPECT_EQ(point.wrong_elements, 0) << point.bytes;
    EXPECT_GT(point.time_us, 0);
    EXPECT_NEAR(point.algbw_gbps, point.bytes / (point.time_us * 1e3), 1e-9 * point.algbw_gbps + 1e-12);
    EXPECT_NEAR(point.busbw_gbps, point.algbw_gbps * 2.0 * (s.ranks - 1) / s.ranks, 1e-12);
  }
  EXPECT_EQ(sizes.size(), 24u);
  EXPECT_EQ(*sizes.begin(), 8);
  EXPECT_EQ(*sizes.rbegin(), 64 << 20);
  EXPECT_EQ(s.points.size(), 48u);  // out-of-place and in-place
  EXPECT_EQ(s.summary.wrong_elements_total, 0);
  EXPECT_TRUE(s.summary.plateau_busbw_gbps);
  EXPECT_EQ(p.out.find("interprobe report"), std::string::npos);  // no text report from another rank

  std::ofstream(dir / "mpi.json") << p.out;
  interprobe::testing::expect_schema_valid(dir / "mpi.json");
  fs::remove_all(dir);
}

// `collectives`: every other collective parallelism uses, 8 B .. 64 MiB on two ranks, with
// nccl-tests' byte accounting (the size is what algbw divides) and bus-bandwidth factors.
TEST(CollectivesMpi, TwoRanksEveryOp8BToTheMaxNoWrongBusbwIsAlgbwTimesItsFactor) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  using interprobe::report::CollectiveOp;
#if defined(INTERPROBE_TESTS_INSTRUMENTED)
  const char* max = "4M";  // instrumented, 64M took a minute; the code paths are the same
  const std::size_t sizes_expected = 20;
  const std::int64_t max_bytes = 4 << 20;
#else
  const char* max = "64M";
  const std::size_t sizes_expected = 24;
  const std::int64_t max_bytes = 64 << 20;
#endif
  auto p = mpiexec({"-np", "2", INTERPROBE_BINARY, "collectives", "--backend", "mpi", "--ops",
                    "all_gather,reduce_scatter,alltoall,broadcast,sendrecv", "--min", "8", "--max", max, "--iters", "5",
                    "--samples", "3", "--warmup", "2", "--budget", "0.1", "--json"},
                   400);
  std::cout << "mpirun -np 2 collectives (5 ops) --max " << max << " took " << p.seconds << " s\n";
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "stdout of mpirun");
  ASSERT_TRUE(r.collective);
  EXPECT_TRUE(r.collective->allreduce.empty());
  ASSERT_EQ(r.collective->sweeps.size(), 5u);
  const std::map<CollectiveOp, double> factor = {{CollectiveOp::all_gather, 0.5}, {CollectiveOp::reduce_scatter, 0.5},
                                                 {CollectiveOp::alltoall, 0.5}, {CollectiveOp::broadcast, 1.0},
                                                 {CollectiveOp::sendrecv, 1.0}};
  for (const auto& s : r.collective->sweeps) {
    const std::string op = to_string(s.collective);
    EXPECT_EQ(s.status, interprobe::report::AllreduceStatus::complete) << op << ": " << s.reason.value_or("");
    EXPECT_EQ(s.ranks, 2);
    EXPECT_EQ(s.op, s.collective == CollectiveOp::reduce_scatter ? "sum" : "none") << op;
    std::set<std::int64_t> sizes;
    for (const auto& point : s.points) {
      sizes.insert(point.bytes);
      EXPECT_EQ(point.wrong_elements, 0) << op << " " << point.bytes << (point.in_place ? " in place" : "");
      EXPECT_NEAR(point.algbw_gbps, point.bytes / (point.time_us * 1e3), 1e-9 * point.algbw_gbps + 1e-12) << op;
      EXPECT_NEAR(point.busbw_gbps, point.algbw_gbps * factor.at(s.collective), 1e-12) << op;
    }
    EXPECT_EQ(sizes.size(), sizes_expected) << op;
    EXPECT_EQ(*sizes.begin(), 8) << op;
    EXPECT_EQ(*sizes.rbegin(), max_bytes) << op;
    const bool in_place = s.collective != CollectiveOp::alltoall && s.collective != CollectiveOp::sendrecv;
    EXPECT_EQ(s.points.size(), in_place ? 2 * sizes_expected : sizes_expected) << op;
  }
  auto dir = fs::temp_directory_path() / ("interprobe-mpi-ops-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "ops.json") << p.out;
  interprobe::testing::expect_schema_valid(dir / "ops.json");
  fs::remove_all(dir);
}

TEST(CollectivesCli, AnUnknownCollectiveIsExitTwoNamingOps) {
  auto p = run_interprobe({"collectives", "--backend", "mpi", "--ops", "all_gather,allgather"});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("--ops 'allgather'"), std::string::npos) << p.err;
}

TEST(AllreduceMpi, RanksWithDifferentOptionsFailOnEveryRankNotHang) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  auto p = mpiexec({"-np", "1", INTERPROBE_BINARY, "allreduce", "--backend", "mpi", "--max", "1K", ":", "-np", "1",
                    INTERPROBE_BINARY, "allreduce", "--backend", "mpi", "--max", "2K"},
                   60);
  EXPECT_NE(p.exit_code, 0);
  EXPECT_LT(p.seconds, 60);
  // Rank 1 names both option sets; rank 0 says how many differ. Both exit 2.
  EXPECT_NE(p.err.find("rank 0 has"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("1 of 2 MPI ranks were started with options other than rank 0's"), std::string::npos) << p.err;
}

TEST(AllreduceMpi, VariantsOtherThanDefaultAreRejectedForMpi) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  auto p = mpiexec({"-np", "2", INTERPROBE_BINARY, "allreduce", "--backend", "mpi", "--variant", "p2p-off"}, 60);
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("NCCL settings"), std::string::npos) << p.err;
}
