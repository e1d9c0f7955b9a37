// The ranking end to end on reports: the seed case (tests/fixtures/seed-case), a report that
// measured nothing, and prices read from a saved host compute report. Expected numbers are
// computed here by hand from the fixture's construction (its README).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "report/analysis/bottleneck/analyze.hpp"
#include "report/analysis/bottleneck/report_prices.hpp"
#include "report/model/json.hpp"
#include "report/model/metrics.hpp"

namespace bn = interprobe::bottleneck;
namespace report = interprobe::report;
namespace workload = interprobe::workload;
using report::StepCategory;

namespace {

const std::string kFixtures = INTERPROBE_FIXTURES;
const std::string kModels = std::string(INTERPROBE_SOURCE_DIR) + "/examples/models/";

double category(const report::BatchEstimate& b, StepCategory c) {
  for (const auto& t : b.categories)
    if (t.category == c) return t.time_us.value_or(-1);
  return -1;
}
report::Provenance provenance(const report::BatchEstimate& b, StepCategory c) {
  for (const auto& t : b.categories)
    if (t.category == c) return t.provenance;
  return report::Provenance::not_measured;
}
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& l : lines)
    if (contains(l, part)) return true;
  return false;
}

bn::WorkloadRequest seed_request() {
  bn::WorkloadRequest rq;
  rq.model = workload::read_model_config(kModels + "glm-5-nvfp4.json");
  rq.config = "glm-5-nvfp4.json";
  rq.tp = 8;
  rq.batches = {1, 8, 64};
  // 10.33 tokens/s at concurrency 1 and 225 at 64 (reference.md §10).
  rq.observed = {{1, 1e6 / 10.33}, {64, 64 * 1e6 / 225}};
  return rq;
}

// The seed case ranked as the tests read it: its report, GLM-5 at TP 8, the GPU's specs assumed.
report::Report seed_report() { return report::read_report_file(kFixtures + "/seed-case/report.json"); }

bn::AnalyzeOptions seed_assumptions() {
  bn::AnalyzeOptions assume;
  assume.assume_gpu = "rtx-pro-6000";
  return assume;
}

report::WorkloadEstimate seed_estimate() { return bn::estimate_workload(seed_report(), seed_request(), seed_assumptions()); }

}  // namespace

// The fixture's all-reduce: t(S) = 50 us + S / (32 GB/s busbw · 8/14) at 8 ranks.
double seed_allreduce_us(double bytes) { return 50.0 + bytes / (32.0 / 1.75 * 1e3); }

TEST(SeedCase, PricesTheAllReducesTheMemoryFloorAndTheLaunchesAndSaysWhatItCannotExplain) {
  auto w = seed_estimate();
  ASSERT_EQ(w.batches.size(), 3u);
  const auto& b1 = w.batches[0];
  EXPECT_EQ(b1.counts.all_reduces, 157);  // 2 × 78 layers + the embedding
  EXPECT_EQ(b1.counts.all_reduce_bytes, 12288);  // 1 token × hidden 6144 × 2 bytes

  // Latency part: every all-reduce pays the 8 B time; the logits gather (vocab 154880 × 2 B) is
  // half an all-reduce of its size (33.5 us), under that floor, so all of it counts as latency.
  double floor_us = seed_allreduce_us(8);
  double gather_us = seed_allreduce_us(154880.0 * 2) / 2;
  double latency = 157 * floor_us + std::min(gather_us, floor_us);
  EXPECT_NEAR(category(b1, StepCategory::communication_latency), latency, 0.01 * latency);
  EXPECT_EQ(provenance(b1, StepCategory::communication_latency), report::Provenance::interpolated);

  // Memory floor: the weights one rank reads at batch 1 over the assumed 1,792 GB/s (≈ 5.1 ms;
  // reference.md says ≈ 6 ms with a coarser weight count).
  double weights_us = b1.counts.weight_bytes / 1792e9 * 1e6;
  EXPECT_GT(weights_us, 4500);
  EXPECT_LT(weights_us, 6500);
  EXPECT_NEAR(category(b1, StepCategory::gemm_memory_bound), weights_us, 0.03 * weights_us);
  EXPECT_EQ(provenance(b1, StepCategory::gemm_memory_bound), report::Provenance::assumed);
  // Launch floor: the estimated kernels at the assumed 3 us each.
  EXPECT_NEAR(category(b1, StepCategory::launch_overhead), 3.0 * static_cast<double>(b1.counts.kernels_estimated), 1e-6);

  // Observed 96.8 ms per token at concurrency 1: most of it is not explained, and the verdict
  // says so instead of naming compute.
  ASSERT_TRUE(b1.observed_step_us && b1.residual_us);
  EXPECT_NEAR(*b1.observed_step_us, 1e6 / 10.33, 1);
  EXPECT_GT(*b1.residual_us / *b1.observed_step_us, 0.5);
  EXPECT_NE(b1.bottleneck, StepCategory::gemm_compute_bound);
  EXPECT_TRUE(contains(w.verdict, "not established")) << w.verdict;
  EXPECT_TRUE(contains(w.verdict, "explains 2")) << w.verdict;  // ~20%
  EXPECT_EQ(w.confidence, report::Confidence::low);
  EXPECT_TRUE(any_contains(w.notes, "busy-wait"));
  EXPECT_TRUE(any_contains(w.notes, "dependent chain"));
  EXPECT_TRUE(any_contains(w.notes, "skew"));
  // Batching helps anyway: the modeled curve rises with the batch and the note shows it.
  EXPECT_LT(w.batches[0].tokens_per_s, w.batches[1].tokens_per_s);
  EXPECT_LT(w.batches[1].tokens_per_s, w.batches[2].tokens_per_s);
  EXPECT_TRUE(any_contains(w.notes, "batching raises tokens/s"));
  ASSERT_TRUE(w.gemm_overtakes_communication_at_batch);
  EXPECT_GT(*w.gemm_overtakes_communication_at_batch, 1);
}

TEST(SeedCase, WithoutAssumingSpecsTheGemmsAreNotMeasuredAndNothingIsRanked) {
  auto r = seed_report();
  auto w = bn::estimate_workload(r, seed_request());
  for (const auto& b : w.batches) {
    EXPECT_FALSE(b.bottleneck);
    EXPECT_EQ(category(b, StepCategory::gemm_memory_bound), -1);
  }
  EXPECT_TRUE(contains(w.verdict, "cannot rank")) << w.verdict;
  EXPECT_TRUE(any_contains(w.not_priced, "interprobe compute"));
  EXPECT_EQ(w.confidence, report::Confidence::low);
}

TEST(Analyze, AReportWithoutComputeOrCollectiveSaysWhichAreMissing) {
  report::Report empty;
  bn::WorkloadRequest rq;
  rq.model = workload::read_model_config(kModels + "llama-3.1-70b.json");
  rq.tp = 8;
  auto s = bn::analyze_bottlenecks(empty, {rq});
  ASSERT_EQ(s.workloads.size(), 1u);
  const auto& w = s.workloads[0];
  EXPECT_TRUE(s.sources.empty());
  EXPECT_TRUE(any_contains(w.not_priced, "interprobe compute"));
  EXPECT_TRUE(any_contains(w.not_priced, "interprobe allreduce"));
  EXPECT_TRUE(contains(w.verdict, "cannot rank"));
}

TEST(Analyze, UnknownAssumedGpuIsAnInputErrorListingTheKnownOnes) {
  report::Report empty;
  bn::AnalyzeOptions o;
  o.assume_gpu = "tpu-v5";
  bn::WorkloadRequest rq;
  rq.model = workload::read_model_config(kModels + "llama-3.1-70b.json");
  try {
    bn::estimate_workload(empty, rq, o);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_TRUE(contains(e.what(), "tpu-v5"));
    EXPECT_TRUE(contains(e.what(), "rtx-pro-6000"));
  }
}

// The saved host compute report measured gate_up_tp4 (7168×4096, f32) at M = 1…512: a bf16 GEMM
// of that shape is priced from it at half the time (half the weight bytes), marked extrapolated,
// and the memory read prices bytes at the fastest measured read.
TEST(ReportPrices, HostComputeReportPricesGemmsAndStreamingFromItsMeasurements) {
  auto r = report::read_report_file(kFixtures + "/reports/compute-host-quick.json");
  bn::ReportPrices prices(r);
  const auto& engine = r.compute->engines.at(0);
  double m8_us = 0;
  for (const auto& p : engine.points)
    if (p.m == 8) m8_us = p.timing.median_us;
  ASSERT_GT(m8_us, 0);
  workload::GemmOp op{"mlp.gate_up_proj", 8, 7168, 4096, 1, workload::WeightDtype::bf16};
  auto price = prices.gemm(op);
  ASSERT_TRUE(price);
  EXPECT_NEAR(price->us, m8_us / 2, 1e-6 * m8_us);
  EXPECT_EQ(price->provenance, report::Provenance::extrapolated);
  auto read = prices.stream_read(1e9);
  ASSERT_TRUE(read);
  EXPECT_NEAR(read->us, 1e9 / (*engine.memory_ceiling_gbps * 1e9) * 1e6, 1e-6);
  EXPECT_FALSE(prices.all_reduce(12288, 2));  // no collective in that report
  EXPECT_FALSE(prices.launches(100));          // a host engine has no launch floor
}

// The metrics view carries the ranking (for check, compare and Prometheus), each row labelled
// with how its number was obtained.
TEST(SeedCase, MetricsRowsCarryTheModeledStepAndItsProvenance) {
  auto r = seed_report();
  r.bottlenecks = bn::analyze_bottlenecks(r, {seed_request()}, seed_assumptions());
  const auto& b1 = r.bottlenecks->workloads.at(0).batches.at(0);
  bool latency = false, tokens = false;
  for (const auto& row : report::metrics_of(r)) {
    if (row.path == "bottlenecks/GLM-5-NVFP4/tp8/b1/communication_latency_us") {
      latency = true;
      EXPECT_NEAR(row.value, category(b1, StepCategory::communication_latency), 1e-9);
      EXPECT_EQ(row.labels.at("provenance"), "interpolated");
    }
    if (row.path == "bottlenecks/GLM-5-NVFP4/tp8/b1/tokens_per_s") {
      tokens = true;
      EXPECT_NEAR(row.value, b1.tokens_per_s, 1e-9);
      EXPECT_EQ(row.labels.at("provenance"), "assumed");
      EXPECT_EQ(row.better, report::Better::higher);
    }
  }
  EXPECT_TRUE(latency);
  EXPECT_TRUE(tokens);
}

// What-ifs: removing the largest cost is an upper bound computed from the same step; half the TP
// is refused when the weights do not fit the GPU (GLM-5 NVFP4 at TP 4: over 96 GB per GPU).
TEST(SeedCase, WhatIfsBoundTheLeversAndCheckMemoryBeforeALowerTp) {
  auto w = seed_estimate();
  const auto& b1 = w.batches.front();
  bool removal = false, tp4 = false;
  for (const auto& wi : w.what_ifs) {
    if (wi.batch == 1 && wi.change == "without all-reduce latency") {
      removal = true;
      double rest_us = b1.modeled_step_us - category(b1, StepCategory::communication_latency);
      ASSERT_TRUE(wi.tokens_per_s);
      EXPECT_NEAR(*wi.tokens_per_s, 1e6 / rest_us, 1e-6);
      EXPECT_NEAR(*wi.gain_fraction, b1.modeled_step_us / rest_us - 1, 1e-9);
    }
    if (wi.batch == 1 && wi.change == "TP 4") {
      tp4 = true;
      EXPECT_FALSE(wi.tokens_per_s);
      EXPECT_TRUE(contains(wi.note, "does not fit")) << wi.note;
    }
  }
  EXPECT_TRUE(removal);
  EXPECT_TRUE(tp4);
}

// The seed's GPUs have no P2P (NVML: not_supported for every pair): "P2P on" reprices the 157
// all-reduces and the logits gather from the published 8-GPU PCIe row, t(S) = 24 us + S x 1.75 /
// 39 GB/s, marked assumed, and says how much of the observed step that is.
TEST(SeedCase, P2pOnRepricesTheAllReducesFromPublishedNumbersMarkedAssumed) {
  auto r = seed_report();
  bn::AnalyzeOptions assume = seed_assumptions();
  auto w = bn::estimate_workload(r, seed_request(), assume);
  const auto& b1 = w.batches.front();
  const report::WhatIf* p2p = nullptr;
  for (const auto& wi : w.what_ifs)
    if (wi.batch == 1 && wi.change == "P2P on") p2p = &wi;
  ASSERT_NE(p2p, nullptr);
  auto published_us = [](double bytes) { return 24.0 + bytes * 1.75 / 39e3; };
  double after_us = 157 * published_us(12288) + published_us(154880.0 * 2) / 2;  // the gather: half an all-reduce
  double before_us = category(b1, StepCategory::communication_latency) + category(b1, StepCategory::communication_bandwidth);
  double step_us = b1.modeled_step_us - before_us + after_us;
  ASSERT_TRUE(p2p->tokens_per_s);
  EXPECT_NEAR(*p2p->tokens_per_s, 1e6 / step_us, 1e-3 * 1e6 / step_us);
  EXPECT_EQ(p2p->provenance, report::Provenance::assumed);
  EXPECT_TRUE(contains(p2p->note, "NVML reports no P2P")) << p2p->note;
  // About 4 ms of the observed 96.8 ms: P2P alone is not the lever this step needs.
  double saved_percent = (before_us - after_us) / *b1.observed_step_us * 100;
  EXPECT_TRUE(contains(p2p->note, fmt::format("{:.0f}% of the observed", saved_percent))) << p2p->note;
  EXPECT_LT(saved_percent, 10);

  // At TP 4 there is no published row: not priced, and the note says what to measure instead.
  auto rq4 = seed_request();
  rq4.tp = 4;
  for (const auto& wi : bn::estimate_workload(r, rq4, assume).what_ifs)
    if (wi.change == "P2P on") {
      EXPECT_FALSE(wi.tokens_per_s);
      EXPECT_TRUE(contains(wi.note, "no published P2P all-reduce for 4 GPUs")) << wi.note;
    }
  // A machine whose report says nothing against P2P gets no such what-if.
  report::Report no_gpus = r;
  no_gpus.topology->gpu_pairs.clear();
  for (const auto& wi : bn::estimate_workload(no_gpus, seed_request(), assume).what_ifs) EXPECT_NE(wi.change, "P2P on");
}

// A GPU engine that measured its launches both ways (eager chain 5 us, 1.5 us per kernel in a
// graph): "CUDA graphs" reprices the step's kernels at the graph's cost, measured.
TEST(SeedCase, CudaGraphsRepriceTheLaunchesAtTheGraphsMeasuredCost) {
  auto r = seed_report();
  report::ComputeEngineResult e;
  e.engine = report::ComputeEngineKind::cuda;
  e.launch_floor_us = 5;
  e.launch_floor_graph_us = 1.5;
  report::GemmPoint p;  // ReportPrices reads an engine that measured GEMMs
  p.dtype = report::ComputeDtype::bf16;
  p.m = 1;
  p.n = p.k = 4096;
  p.timing.median_us = 20;
  e.points.push_back(p);
  r.compute.emplace();
  r.compute->engines.push_back(e);
  bn::AnalyzeOptions assume;
  assume.assume_gpu = "rtx-pro-6000";
  auto w = bn::estimate_workload(r, seed_request(), assume);
  const auto& b1 = w.batches.front();
  double eager_us = category(b1, StepCategory::launch_overhead);
  EXPECT_NEAR(eager_us, 5.0 * static_cast<double>(b1.counts.kernels_estimated), 1e-6);
  const report::WhatIf* graphs = nullptr;
  for (const auto& wi : w.what_ifs)
    if (wi.batch == 1 && wi.change == "CUDA graphs") graphs = &wi;
  ASSERT_NE(graphs, nullptr);
  double step_us = b1.modeled_step_us - eager_us + 1.5 * static_cast<double>(b1.counts.kernels_estimated);
  ASSERT_TRUE(graphs->tokens_per_s);
  EXPECT_NEAR(*graphs->tokens_per_s, 1e6 / step_us, 1e-6 * 1e6 / step_us);
  EXPECT_TRUE(contains(graphs->note, "1.50 us each")) << graphs->note;
  // Without a graph measurement there is no such what-if.
  r.compute->engines[0].launch_floor_graph_us.reset();
  for (const auto& wi : bn::estimate_workload(r, seed_request(), assume).what_ifs) EXPECT_NE(wi.change, "CUDA graphs");
}
