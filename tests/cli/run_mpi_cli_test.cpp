// `mpirun -np 2 interprobe run` (issue 16 item 5): the collective probe measures the MPI
// all-reduce across the ranks, rank 0 alone prints and writes the report, the other rank exits
// with rank 0's code, mismatched options end every rank with exit 2. Skipped when this build
// has no MPI launcher.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "model/json.hpp"
#include "model/report_file_writer.hpp"
#include "support/mpiexec.hpp"
#include "support/run_binary.hpp"
#include "support/schema_check.hpp"
#include "support/temp_tree.hpp"

namespace fs = std::filesystem;
using interprobe::report::AllreduceBackend;
using interprobe::report::AllreduceStatus;
using interprobe::report::ProbeStatus;
using interprobe::report::StepCategory;
using interprobe::report::Provenance;

namespace {

using interprobe::testing::kMpiexec;

// OpenMPI refuses root without the first two and needs oversubscription on a machine with one
// core; other MPIs ignore them. Leaks are not checked under ASan: OpenMPI keeps allocations of
// components it dlclose()s (see collective_cli_test.cpp).
interprobe::testing::Process mpiexec(const std::vector<std::string>& args, double limit_s,
                                     std::vector<std::string> env = {}) {
  for (const char* v : {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                        "OMPI_MCA_rmaps_base_oversubscribe=1", "ASAN_OPTIONS=detect_leaks=0"})
    env.emplace_back(v);
  interprobe::testing::RunLimits limits;
  limits.time = std::chrono::milliseconds(static_cast<long>(limit_s * 1000));
  auto p = interprobe::testing::run_program(kMpiexec, args, env, limits);
  EXPECT_FALSE(p.timed_out) << "mpiexec still running after " << limit_s << " s: a hang\n" << p.err;
  return p;
}

std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

const interprobe::report::AllreduceSweep* sweep_of(const interprobe::report::Report& r, AllreduceBackend backend) {
  if (!r.collective) return nullptr;
  for (const auto& s : r.collective->allreduce)
    if (s.backend == backend) return &s;
  return nullptr;
}

void expect_mpi_sweep_across_two_ranks(const interprobe::report::Report& r) {
  const auto* s = sweep_of(r, AllreduceBackend::mpi);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->ranks, 2);
  EXPECT_EQ(s->status, AllreduceStatus::complete) << s->reason.value_or("");
  ASSERT_FALSE(s->points.empty());
  EXPECT_EQ(s->points.front().bytes, 8);
  for (const auto& point : s->points) {
    EXPECT_EQ(point.wrong_elements, 0) << point.bytes;
    EXPECT_GT(point.busbw_gbps, 0) << point.bytes;  // two ranks: busbw = algbw, not 0 as for one
  }
  EXPECT_EQ(s->summary.wrong_elements_total, 0);
}

}  // namespace

TEST(RunMpi, TwoRanksMeasureTheMpiAllreduceAndRankZeroAlonePrintsOneReport) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  interprobe::testing::TempTree tree;
  // One model's GEMMs (the full run below times all three): this test is about the MPI sweep.
  std::string model = std::string(INTERPROBE_SOURCE_DIR) + "/examples/models/mixtral-8x7b.json";
  auto p = mpiexec({"-np", "2", INTERPROBE_BINARY, "run", "--only", "collective,compute", "--max-size", "4M", "--json", "-q", "--batch", "1",
                    "--model", model},
                   240);
  std::cout << "mpirun -np 2 interprobe run --only collective,compute took " << p.seconds << " s\n";
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(occurrences(p.out, "\"schema_version\""), 1u);  // rank 1 printed nothing
  auto r = interprobe::report::parse_report_text(p.out, "stdout of mpirun");
  ASSERT_NE(r.probe("collective"), nullptr);
  EXPECT_EQ(r.probe("collective")->status, ProbeStatus::ok) << r.probe("collective")->reason.value_or("");
  expect_mpi_sweep_across_two_ranks(r);
  ASSERT_NE(r.probe("compute"), nullptr);
  EXPECT_EQ(r.probe("compute")->status, ProbeStatus::ok) << r.probe("compute")->reason.value_or("");
  EXPECT_TRUE(r.compute);
  ASSERT_NE(r.probe("bandwidth"), nullptr);
  EXPECT_EQ(r.probe("bandwidth")->status, ProbeStatus::skipped);  // --only still applies
  std::ofstream(tree.path() / "r.json") << p.out;
  interprobe::testing::expect_schema_valid(tree.path() / "r.json");
}

TEST(RunMpi, AFullRunPrintsTheTextReportOnceAndRankZeroWritesTheFile) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  interprobe::testing::TempTree tree;
  auto file = tree.path() / "r.json";
  // Two of the example models (an MoE in bf16 and one with 128 experts) at two batches: the three
  // default models' host GEMMs took most of this test's 160 s on two cores, and add no probe.
  const std::string models = std::string(INTERPROBE_SOURCE_DIR) + "/examples/models/";
  auto p = mpiexec({"-np", "2", INTERPROBE_BINARY, "run", "-o", file.string(), "-q", "--model", models + "qwen3-30b-a3b.json",
                    "--model", models + "mixtral-8x7b.json", "--batch", "1,64"},
                   240);
  std::cout << "mpirun -np 2 interprobe run -o r.json took " << p.seconds << " s\n";
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(occurrences(p.out, "all-reduce: mpi default 2 ranks"), 1u) << p.out;  // one text report, from rank 0
  EXPECT_EQ(p.out.find("\x1b["), std::string::npos);  // no colour codes on mpirun's pseudo-terminal
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto r = interprobe::report::parse_report_text(text, file.string());
  for (const char* name : {"system", "topology", "virtualization", "bandwidth", "collective", "compute"}) {
    ASSERT_NE(r.probe(name), nullptr) << name;
    EXPECT_NE(r.probe(name)->status, ProbeStatus::failed) << name << ": " << r.probe(name)->reason.value_or("");
    EXPECT_NE(r.probe(name)->status, ProbeStatus::skipped) << name << ": " << r.probe(name)->reason.value_or("");
  }
  EXPECT_EQ(r.probe("collective")->status, ProbeStatus::ok);
  expect_mpi_sweep_across_two_ranks(r);
  // The ranking's every input came from this run's curves: the all-reduces from the MPI sweep,
  // the GEMMs between the two measured shapes of each model and dtype, the launches from the
  // host pool's floor, the KV reads from the memory read. Nothing stretched or assumed.
  ASSERT_TRUE(r.bottlenecks);
  ASSERT_EQ(r.bottlenecks->workloads.size(), 2u);
  // On a loaded machine the host GEMMs may spend run's time budget before the last shape; the
  // shapes left are noted skipped, and the GEMMs past the last measured one are extrapolated.
  bool gemm_budget_spent = false;
  for (const auto& e : r.compute->engines)
    for (const auto& note : e.notes) gemm_budget_spent |= note.find("were spent") != std::string::npos;
  for (const auto& w : r.bottlenecks->workloads) {
    EXPECT_EQ(w.tp, 2) << w.model;
    EXPECT_TRUE(w.not_priced.empty()) << w.model << ": " << w.not_priced.front();
    ASSERT_FALSE(w.batches.empty()) << w.model;
    for (const auto& b : w.batches)
      for (const auto& c : b.categories)
        EXPECT_TRUE(c.provenance == Provenance::measured || c.provenance == Provenance::interpolated ||
                    (gemm_budget_spent && c.provenance == Provenance::extrapolated &&
                     (c.category == StepCategory::gemm_memory_bound || c.category == StepCategory::gemm_compute_bound)))
            << w.model << " batch " << b.batch << " " << interprobe::report::to_string(c.category) << ": "
            << interprobe::report::to_string(c.provenance);
  }
  EXPECT_FALSE(fs::exists(interprobe::report::partial_report_path(file.string())));
  interprobe::testing::expect_schema_valid(file);
}

TEST(RunMpi, SimulatedGpusKeepTheNcclSweepBesideTheMpiOne) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  interprobe::testing::TempTree tree;
  auto file = tree.path() / "r.json";
  auto p = mpiexec({"-np", "2", INTERPROBE_BINARY, "run", "--only", "collective", "--max-size", "4M", "--json", "-o",
                    file.string(), "-q"},
                   240,
                   {std::string("INTERPROBE_CUDA_LIB=") + INTERPROBE_SIM_CUDA,
                    std::string("INTERPROBE_NCCL_LIB=") + INTERPROBE_SIM_NCCL,
                    std::string("INTERPROBE_NVML_LIB=") + INTERPROBE_SIM_NVML,
                    std::string("INTERPROBE_SIM_CONFIG=") + INTERPROBE_SIM_DEVICES + "/a100-pcie-2x-p2p-corrupt.json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(occurrences(p.out, "\"schema_version\""), 1u);  // rank 1 printed nothing
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto r = interprobe::report::parse_report_text(text, file.string());
  const auto* nccl = sweep_of(r, AllreduceBackend::nccl);
  ASSERT_NE(nccl, nullptr);  // one process over both simulated GPUs, as without mpirun
  EXPECT_EQ(nccl->ranks, 2);
  EXPECT_EQ(nccl->status, AllreduceStatus::complete) << nccl->reason.value_or("");
  expect_mpi_sweep_across_two_ranks(r);
  interprobe::testing::expect_schema_valid(file);
}

TEST(RunMpi, RanksWithDifferentOptionsExitTwoNotHang) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  auto p = mpiexec({"-np", "1", INTERPROBE_BINARY, "run", "--only", "system", "--json", ":", "-np", "1",
                    INTERPROBE_BINARY, "run", "--only", "virtualization", "--json"},
                   60);
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("give every rank the same run options"), std::string::npos) << p.err;
  EXPECT_EQ(occurrences(p.out, "\"schema_version\""), 0u);  // no rank measured or printed
}

TEST(RunMpi, RankZeroFailingEndsTheOtherRankWithItsCode) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  interprobe::testing::TempTree tree;
  // -o into a directory that does not exist: rank 0 fails before probing, after MPI started.
  auto target = tree.path() / "missing" / "r.json";
  auto p = mpiexec({"-np", "2", INTERPROBE_BINARY, "run", "--only", "system", "-o", target.string(), "-q"}, 60);
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_EQ(occurrences(p.err, "interprobe: error"), 1u) << p.err;  // rank 0 says what was wrong; rank 1 is silent
  EXPECT_NE(p.err.find("does not exist"), std::string::npos) << p.err;
  EXPECT_EQ(p.err.find("MPI_ABORT"), std::string::npos) << p.err;  // told by rank 0, not killed
  EXPECT_FALSE(fs::exists(target));
}

TEST(RunMpi, WithoutItsMpiModuleRankZeroReportsAloneAndSaysWhy) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  // A copy of the binary without interprobe-mpi.so beside it: MPI cannot start, so the ranks
  // cannot agree; rank 0 (by the launcher's variables) reports alone, the collective probe says why.
  interprobe::testing::TempTree tree;
  fs::copy_file(INTERPROBE_BINARY, tree.path() / "interprobe");
  auto p = mpiexec({"-np", "2", (tree.path() / "interprobe").string(), "run", "--only", "collective", "--json", "-q"}, 60);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(occurrences(p.out, "\"schema_version\""), 1u) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "stdout of mpirun");
  ASSERT_NE(r.probe("collective"), nullptr);
  EXPECT_EQ(r.probe("collective")->status, ProbeStatus::unsupported);
  EXPECT_NE(r.probe("collective")->reason.value_or("").find("interprobe-mpi.so is missing"), std::string::npos)
      << r.probe("collective")->reason.value_or("");
  EXPECT_NE(p.err.find("rank 1:"), std::string::npos) << p.err;  // the other rank says it left the report to rank 0
}
