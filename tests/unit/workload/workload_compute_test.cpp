// run's compute request from the planned workloads (cli/workload_compute.cpp): per model and
// weight dtype the smallest and largest weight shape of one rank, M = 1 and the batches, the TP
// measured when none was given. Shapes by hand from the configs in examples/models/.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/workload_compute.hpp"
#include "model/report.hpp"

namespace interprobe::cli {
namespace {

using report::ComputeDtype;

const std::string kModels = std::string(INTERPROBE_SOURCE_DIR) + "/examples/models/";

PreparedWorkloads workloads(const std::vector<std::string>& models, std::optional<std::int64_t> tp, const std::string& batch) {
  WorkloadOptions o;
  for (const auto& m : models) o.models.push_back(kModels + m);
  o.tp = tp;
  o.batch = batch;
  return prepare_workloads(o);
}

// A report whose MPI all-reduce ran across `ranks` processes: the TP a run measured.
report::Report measured_at(std::int64_t ranks) {
  report::Report r;
  r.collective.emplace();
  report::AllreduceSweep mpi;
  mpi.ranks = ranks;
  mpi.points.push_back({});
  r.collective->allreduce.push_back(mpi);
  return r;
}

bool has(const ComputeRequest& r, std::int64_t n, std::int64_t k, ComputeDtype d) {
  return std::any_of(r.shapes.begin(), r.shapes.end(), [&](const ComputeShape& s) { return s.n == n && s.k == k && s.dtype == d; });
}

TEST(WorkloadCompute, LlamaAtTp2MeasuresItsSmallestAndLargestBf16Shapes) {
  // Llama-3.1-70B: hidden 8192, 64 heads of 128, 8 KV heads, intermediate 28672, vocab 128256.
  // One rank of TP 2: o_proj 8192 x 4096 (33.5M weights) is the smallest, lm_head 64128 x 8192
  // (525M) the largest; qkv (5120 x 8192), gate_up (28672 x 8192), down (8192 x 14336) lie between.
  ComputeRequest r = workload_compute_request(workloads({"llama-3.1-70b.json"}, 2, "1,8,64"), report::Report{});
  ASSERT_EQ(r.shapes.size(), 2u);
  EXPECT_TRUE(has(r, 8192, 4096, ComputeDtype::bf16));
  EXPECT_TRUE(has(r, 64128, 8192, ComputeDtype::bf16));
  EXPECT_EQ(r.m_values, (std::vector<std::int64_t>{1, 8, 64}));
  EXPECT_EQ(r.dtypes, (std::vector<ComputeDtype>{ComputeDtype::f32, ComputeDtype::bf16}));
  EXPECT_EQ(r.plan, report::ComputePlan::custom);
}

TEST(WorkloadCompute, WithoutTpTheReportsMeasuredRanksDecide) {
  // At TP 4 Llama's lm_head is 32064 x 8192; M = 1 is always measured, batch 2 beside it.
  ComputeRequest r = workload_compute_request(workloads({"llama-3.1-70b.json"}, std::nullopt, "2"), measured_at(4));
  EXPECT_TRUE(has(r, 32064, 8192, ComputeDtype::bf16));
  EXPECT_EQ(r.m_values, (std::vector<std::int64_t>{1, 2}));
}

TEST(WorkloadCompute, DeepSeekMeasuresFp8ExpertsAndItsBf16PartsApart) {
  // DeepSeek-V3 is fp8 except lm_head (bf16 in its quantization config); at TP 2 the fp8 GEMMs
  // run from kv_a_proj_with_mqa (576 x 7168, not sharded) to the dense layers' gate_up (18432 x 7168).
  ComputeRequest r = workload_compute_request(workloads({"deepseek-v3.json"}, 2, "1"), report::Report{});
  EXPECT_TRUE(has(r, 576, 7168, ComputeDtype::fp8_e4m3));
  EXPECT_TRUE(has(r, 18432, 7168, ComputeDtype::fp8_e4m3));
  EXPECT_TRUE(has(r, 64640, 7168, ComputeDtype::bf16));  // lm_head: 129280 / 2
  EXPECT_NE(std::find(r.dtypes.begin(), r.dtypes.end(), ComputeDtype::fp8_e4m3), r.dtypes.end());
}

TEST(WorkloadCompute, AModelTheTpDoesNotFitAddsNothingAndNoneFittingFallsBackToTheQuickPlan) {
  // 64 attention heads do not split over 3 ranks.
  ComputeRequest r = workload_compute_request(workloads({"llama-3.1-70b.json"}, std::nullopt, "1"), measured_at(3));
  EXPECT_EQ(r.plan, report::ComputePlan::quick);
  ASSERT_FALSE(r.shapes.empty());
  EXPECT_FALSE(r.shapes[0].dtype);
}

}  // namespace
}  // namespace interprobe::cli
