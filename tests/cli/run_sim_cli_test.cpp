// `interprobe run` against the simulated libcuda, libnccl and libnvidia-ml (tests/sim) with the
// 2x A100 P2P-corrupt description: the CUDA bandwidth sweeps and the NCCL all-reduce come out,
// the vendor library lines say simulated, the corrupt P2P is found, the report validates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "model/json.hpp"
#include "model/report_file_writer.hpp"
#include "support/run_binary.hpp"
#include "support/temp_tree.hpp"

using interprobe::testing::run_interprobe;

TEST(RunSimulated, EveryGpuSectionComesOutMarkedSimulatedAndValidates) {
  interprobe::testing::TempTree tree;
  auto file = tree.path() / "report.json";
  // One model: the host GEMMs of three at three batches are not what this test is about.
  std::string model = std::string(INTERPROBE_SOURCE_DIR) + "/examples/models/mixtral-8x7b.json";
  // Sweeps up to 64 MiB: the simulated links take real time. A point is summarized only when a
  // 0.1 s NVML sample falls inside it: up to 16 MiB (about 20 ms a point) every CUDA sweep missed
  // in about one run of three; at 32 and 64 MiB a miss of all of them is rare.
  auto p = run_interprobe({"run", "-o", file.string(), "-q", "--max-size", "64M", "--model", model},
                          {std::string("INTERPROBE_CUDA_LIB=") + INTERPROBE_SIM_CUDA,
                           std::string("INTERPROBE_NCCL_LIB=") + INTERPROBE_SIM_NCCL,
                           std::string("INTERPROBE_NVML_LIB=") + INTERPROBE_SIM_NVML,
                           std::string("INTERPROBE_CUBLASLT_LIB=") + INTERPROBE_SIM_CUBLASLT,
                           std::string("INTERPROBE_SIM_CONFIG=") + INTERPROBE_SIM_DEVICES + "/a100-pcie-2x-p2p-corrupt.json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto r = interprobe::report::parse_report_text(text, file.string());
  for (const char* lib : {"cuda", "nccl", "cublaslt"}) {
    ASSERT_TRUE(r.tool.libraries.count(lib)) << lib;
    EXPECT_EQ(r.tool.libraries.at(lib).simulated, "interprobe-sim 1") << lib;
  }
  EXPECT_EQ(r.tool.libraries.at("nccl").cuda_major, 12);
  ASSERT_TRUE(r.bandwidth);
  int cuda_sweeps = 0;
  for (const auto& s : r.bandwidth->sweeps)
    if (s.engine == interprobe::report::BandwidthEngine::cuda) {
      ++cuda_sweeps;
      EXPECT_EQ(s.status, interprobe::report::SweepStatus::complete) << to_string(s.kind) << " " << s.reason.value_or("");
    }
  EXPECT_GE(cuda_sweeps, 5);  // h2d, d2h per GPU, the peer copies
  const std::uint64_t max_size_bytes = 64u << 20;  // --max-size 64M: every sweep ends there
  for (const auto& s : r.bandwidth->sweeps) {
    ASSERT_FALSE(s.points.empty()) << to_string(s.kind);
    EXPECT_EQ(s.points.back().bytes, max_size_bytes) << to_string(s.kind);
  }
  bool corrupt = false;
  for (const auto& pair : r.bandwidth->p2p_pairs) corrupt |= pair.truth == interprobe::report::P2pTruth::corrupt;
  EXPECT_TRUE(corrupt);
  ASSERT_TRUE(r.collective);
  ASSERT_FALSE(r.collective->allreduce.empty());
  EXPECT_EQ(r.collective->allreduce[0].status, interprobe::report::AllreduceStatus::complete) << r.collective->allreduce[0].reason.value_or("");
  for (const auto& s : r.collective->allreduce) EXPECT_LE(s.points.back().bytes, max_size_bytes);
  for (const auto& s : r.collective->sweeps) EXPECT_LE(s.points.back().bytes, max_size_bytes);
  // The compute probe's cuda engine ran on the simulated cuBLASLt (the quick plan's shapes exceed
  // what the engine lets the simulator multiply: ceilings and peaks only, each shape skipped with a note).
  ASSERT_TRUE(r.compute);
  auto cuda = std::find_if(r.compute->engines.begin(), r.compute->engines.end(),
                           [](const auto& e) { return e.engine == interprobe::report::ComputeEngineKind::cuda; });
  ASSERT_NE(cuda, r.compute->engines.end());
  EXPECT_EQ(cuda->status, interprobe::report::EngineStatus::ok) << cuda->reason.value_or("");
  EXPECT_EQ(cuda->simulated, "interprobe-sim 1");
  EXPECT_FALSE(cuda->peaks.empty());
  bool data_corrupted = false;
  for (const auto& f : r.findings) data_corrupted |= f.id == "bandwidth.p2p_data_corrupted";  // the corruption is on the peer path
  EXPECT_TRUE(data_corrupted);
  // The simulated NVML sampled beside every GPU measurement: each CUDA copy size, NCCL size and
  // cuBLASLt peak carries a summary (averages of the GPU it loaded most, or why not); host copies none.
  int summarized = 0;
  for (const auto& s : r.bandwidth->sweeps)
    for (const auto& point : s.points) {
      if (s.engine == interprobe::report::BandwidthEngine::host) {
        EXPECT_FALSE(point.telemetry);
        continue;
      }
      ASSERT_TRUE(point.telemetry) << to_string(s.kind) << " " << point.bytes;
      EXPECT_NE(point.telemetry->averages.has_value(), point.telemetry->reason.has_value());
      if (point.telemetry->averages) {
        ++summarized;
        EXPECT_TRUE(point.telemetry->gpu);
        EXPECT_GE(point.telemetry->samples, 1);
        EXPECT_TRUE(point.telemetry->averages->power_limit_fraction);
      } else {
        EXPECT_NE(point.telemetry->reason->find("shorter than one sample"), std::string::npos) << *point.telemetry->reason;
      }
    }
  EXPECT_GT(summarized, 0);
  for (const auto& point : r.collective->allreduce[0].points) EXPECT_TRUE(point.telemetry) << point.bytes;
  for (const auto& peak : cuda->peaks) EXPECT_TRUE(peak.telemetry);
  std::string python = INTERPROBE_PYTHON3;
  if (python.empty() || std::system((python + " -c 'import jsonschema' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "python3-jsonschema not installed";
  std::string cmd = python + " " + INTERPROBE_SOURCE_DIR + "/tests/cli/validate_report.py " + INTERPROBE_SOURCE_DIR +
                    "/report/schema/report.schema.json " + file.string();
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

// Issue 36: the measured P2P grid (nvbandwidth-style, direct vs staged) on simulated GPUs (not run
// on a GPU): NVSwitch H100s copy direct, the KVM guest with P2P off stages every pair.
TEST(RunSimulated, MeasuredP2pGridMarksDirectAndStagedPairs) {
  for (auto [device, word, other] : {std::tuple{"h100-sxm-8x-nvswitch.json", " direct", " staged"},
                                     std::tuple{"rtx-pro-6000-8x-kvm-p2p-off.json", " staged", " direct"}}) {
    auto p = run_interprobe({"bw", "--engine", "cuda", "--sizes", "4K,1M", "--budget", "0.02", "--target-cv", "0.2", "-q", "--no-color"},
                            {std::string("INTERPROBE_CUDA_LIB=") + INTERPROBE_SIM_CUDA,
                             std::string("INTERPROBE_NVML_LIB=") + INTERPROBE_SIM_NVML, "COLUMNS",
                             std::string("INTERPROBE_SIM_CONFIG=") + INTERPROBE_SIM_DEVICES + "/" + device});
    ASSERT_EQ(p.exit_code, 0) << device << ": " << p.err;
    auto grid = p.out.find("measured GB/s per GPU pair");
    ASSERT_NE(grid, std::string::npos) << device << "\n" << p.out;
    grid = p.out.find('\n', grid);  // past the caption, which names both words
    std::string rows = p.out.substr(grid, p.out.find("P2P per GPU pair, from measurements", grid) - grid);
    EXPECT_NE(rows.find("gpu7"), std::string::npos) << rows;
    EXPECT_NE(rows.find(word), std::string::npos) << device << "\n" << rows;
    EXPECT_EQ(rows.find(other), std::string::npos) << device << "\n" << rows;
  }
}

TEST(RunSimulated, AMaxSizeBelowOneMebibyteIsRefusedBeforeAnythingRuns) {
  auto p = run_interprobe({"run", "-q", "--max-size", "64K"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("--max-size 64K: give at least 1M"), std::string::npos) << p.err;
  EXPECT_EQ(run_interprobe({"run", "-q", "--max-size", "4Q"}).exit_code, 2);
}

// A run killed before its final write leaves the partial save of the probes it finished; on the
// simulated libraries that file must say so (it carried no vendor libraries before: gpu-check's
// `run` step once kept such a file, unmarked).
TEST(RunSimulated, APartialSaveOfASimulatedRunIsMarkedSimulated) {
  interprobe::testing::TempTree tree;
  const auto file = tree.path() / "report.json";
  const std::filesystem::path partial = interprobe::report::partial_report_path(file.string());
  // Killed (SIGKILL, no chance to write -o) once the partial save holds the bandwidth section.
  const std::string script =
      "\"$0\" run -q -o \"$1\" --max-size 1M --only topology,bandwidth,collective,compute & pid=$!; "
      "for i in $(seq 600); do grep -q '\"bandwidth\"' \"$2\" 2>/dev/null && break; sleep 0.1; done; "
      "kill -9 $pid; wait $pid; exit 0";
  auto p = interprobe::testing::run_binary(
      "/bin/sh", std::vector<std::string>{"-c", script, INTERPROBE_BINARY, file.string(), partial.string()},
      std::vector<std::string>{
       std::string("INTERPROBE_CUDA_LIB=") + INTERPROBE_SIM_CUDA, std::string("INTERPROBE_NCCL_LIB=") + INTERPROBE_SIM_NCCL,
       std::string("INTERPROBE_NVML_LIB=") + INTERPROBE_SIM_NVML,
       std::string("INTERPROBE_CUBLASLT_LIB=") + INTERPROBE_SIM_CUBLASLT,
       std::string("INTERPROBE_SIM_CONFIG=") + INTERPROBE_SIM_DEVICES + "/a100-pcie-2x-p2p-corrupt.json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  ASSERT_FALSE(std::filesystem::exists(file));
  const auto r = interprobe::report::read_report_file(partial);
  ASSERT_TRUE(r.bandwidth);
  ASSERT_TRUE(r.tool.libraries.count("cuda"));
  EXPECT_EQ(r.tool.libraries.at("cuda").simulated, "interprobe-sim 1");
}
