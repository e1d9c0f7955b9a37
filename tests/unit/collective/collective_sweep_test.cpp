// The sweep engine and the result check, through the backend interface with a test double.
#include <gtest/gtest.h>

#include "probes/collective/allreduce_sweep.hpp"
#include "report/analysis/findings.hpp"
#include "unit/collective/fake_backend.hpp"

namespace ic = interprobe::collective;
using ic::Dtype;
using ic::testing::FakeBackend;

namespace {

ic::SweepPlan small_plan() {
  ic::SweepPlan plan;
  plan.sizes_bytes = interprobe::geometric_sizes(8, 4096, 2);
  plan.iterations = 3;
  plan.samples = 2;
  plan.warmup_iterations = 2;
  return plan;
}

const interprobe::report::AllreducePoint* point_at(const interprobe::report::AllreduceSweep& s, std::int64_t bytes, bool in_place) {
  for (const auto& p : s.points)
    if (p.bytes == bytes && p.in_place == in_place) return &p;
  return nullptr;
}

}  // namespace

TEST(AllreduceSweep, CorrectBackendHasNoWrongResultsAndTheBusbwFormulaHolds) {
  for (Dtype dtype : {Dtype::float32, Dtype::float16, Dtype::bfloat16}) {
    ic::SingleProcessGroup group;
    FakeBackend backend(group, 4);
    interprobe::report::AllreduceSweep sweep;
    ic::run_allreduce_sweep(backend, small_plan(), dtype, sweep);
    ASSERT_EQ(sweep.points.size(), 2u * 10u) << ic::to_string(dtype);  // 8 B .. 4 KiB, both placements
    for (const auto& p : sweep.points) {
      EXPECT_EQ(p.wrong_elements, 0) << p.bytes;
      EXPECT_EQ(p.elements_per_rank * static_cast<std::int64_t>(ic::element_bytes(dtype)), p.bytes);
      EXPECT_NEAR(p.busbw_gbps, p.algbw_gbps * 2.0 * 3 / 4, 1e-12);
      EXPECT_NEAR(p.algbw_gbps, p.bytes / (p.time_us * 1e3), 1e-9);
      EXPECT_LE(p.min_us, p.time_us);
      EXPECT_GE(p.max_us, p.time_us);
      EXPECT_EQ(p.dtype, dtype);
    }
    EXPECT_EQ(sweep.summary.wrong_elements_total, 0);
    EXPECT_EQ(sweep.summary.latency_bytes, 8);
  }
}

TEST(AllreduceSweep, WarmsUpEverySizeBeforeTimingAny) {
  ic::SingleProcessGroup group;
  FakeBackend backend(group, 2);
  interprobe::report::AllreduceSweep sweep;
  auto plan = small_plan();
  plan.budget_s = 0;  // exact call counts
  ic::run_allreduce_sweep(backend, plan, Dtype::float32, sweep);
  const int sizes = static_cast<int>(plan.sizes_bytes.size());
  // 1 connection call, warm-up per size, then per size and placement samples x iterations, and
  // in place one more call of fresh inputs for the check.
  EXPECT_EQ(backend.allreduce_calls, 1 + sizes * plan.warmup_iterations + sizes * (1 + 2 * plan.samples * plan.iterations));
}

TEST(AllreduceSweep, ResultCheckCatchesOneCorruptedElement) {
  ic::SingleProcessGroup group;
  FakeBackend backend(group, 3);
  backend.corrupt_at_bytes = 1024;
  interprobe::report::AllreduceSweep sweep;
  ic::run_allreduce_sweep(backend, small_plan(), Dtype::float32, sweep);
  for (const auto& p : sweep.points) EXPECT_EQ(p.wrong_elements, p.bytes == 1024 ? 1 : 0) << p.bytes << " in_place=" << p.in_place;
  EXPECT_EQ(sweep.summary.wrong_elements_total, 2);
}

TEST(AllreduceSweep, CorruptionOnlyInPlaceIsReportedOnlyThere) {
  ic::SingleProcessGroup group;
  FakeBackend backend(group, 2);
  backend.corrupt_at_bytes = 64;
  backend.corrupt_in_place_only = true;
  interprobe::report::AllreduceSweep sweep;
  ic::run_allreduce_sweep(backend, small_plan(), Dtype::bfloat16, sweep);
  ASSERT_NE(point_at(sweep, 64, true), nullptr);
  EXPECT_EQ(point_at(sweep, 64, true)->wrong_elements, 1);
  EXPECT_EQ(point_at(sweep, 64, false)->wrong_elements, 0);
}

TEST(AllreduceSweep, ABackendThatDoesNothingFailsEveryElement) {
  // The output buffer is poisoned before the checked call: a no-op cannot pass on stale data.
  ic::SingleProcessGroup group;
  FakeBackend backend(group, 2);
  backend.skip_reduction = true;
  interprobe::report::AllreduceSweep sweep;
  auto plan = small_plan();
  plan.in_place = false;
  ic::run_allreduce_sweep(backend, plan, Dtype::float16, sweep);
  for (const auto& p : sweep.points) EXPECT_EQ(p.wrong_elements, 2 * p.elements_per_rank) << p.bytes;  // every element of both ranks
}

TEST(AllreduceSweep, WrongResultsBecomeAFailFinding) {
  ic::SingleProcessGroup group;
  FakeBackend backend(group, 2);
  backend.corrupt_at_bytes = 256;
  interprobe::report::Report report;
  report.collective.emplace();
  auto& sweep = report.collective->allreduce.emplace_back();
  sweep.backend = interprobe::report::AllreduceBackend::nccl;
  sweep.ranks = 2;
  ic::run_allreduce_sweep(backend, small_plan(), Dtype::float32, sweep);
  auto findings = interprobe::analysis::derive_findings(report);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().id, "collective.allreduce_wrong");
  EXPECT_EQ(findings.front().severity, interprobe::report::Severity::fail);
  EXPECT_NE(findings.front().title.find("from 256 bytes"), std::string::npos) << findings.front().title;
}

TEST(AllreduceSweep, HangIsThrownAfterTheBackendAborted) {
  ic::SingleProcessGroup group;
  FakeBackend backend(group, 2);
  backend.hang_at_bytes = 512;
  interprobe::report::AllreduceSweep sweep;
  try {
    ic::run_allreduce_sweep(backend, small_plan(), Dtype::float32, sweep);
    FAIL() << "no hang reported";
  } catch (const ic::CollectiveHang& h) {
    EXPECT_EQ(h.bytes(), 512u);
    EXPECT_NE(std::string(h.what()).find("hung at 512 bytes"), std::string::npos);
  }
  EXPECT_TRUE(backend.aborted);
}

TEST(AllreduceSweep, BudgetLowersIterationsButKeepsAtLeastOne) {
  ic::SingleProcessGroup group;
  FakeBackend backend(group, 2);
  auto plan = small_plan();
  plan.iterations = 1000000;
  plan.samples = 10;
  plan.budget_s = 1e-9;
  interprobe::report::AllreduceSweep sweep;
  ic::run_allreduce_sweep(backend, plan, Dtype::float32, sweep);
  for (const auto& p : sweep.points) {
    EXPECT_EQ(p.iterations, 1);
    EXPECT_EQ(p.samples, 2);  // at least two samples even past the budget
  }
}

TEST(AllreduceSummary, LatencyPlateauAndHalfPlateau) {
  std::vector<interprobe::report::AllreducePoint> points;
  const std::vector<std::pair<std::int64_t, double>> curve = {{8, 0.01}, {1024, 1.0}, {65536, 10.0}, {1 << 20, 19.0},
                                                              {4 << 20, 20.0}, {16 << 20, 19.5}};
  for (auto [bytes, busbw] : curve) {
    interprobe::report::AllreducePoint p;
    p.bytes = bytes;
    p.busbw_gbps = busbw;
    p.time_us = static_cast<double>(bytes) / 100;
    points.push_back(p);
    p.in_place = true;
    p.busbw_gbps = 1000;  // in-place points do not enter the summary
    p.wrong_elements = 3;
    points.push_back(p);
  }
  auto s = ic::summarize_sweep(points);
  EXPECT_EQ(s.latency_bytes, 8);
  EXPECT_DOUBLE_EQ(*s.latency_us, 0.08);
  EXPECT_DOUBLE_EQ(*s.peak_busbw_gbps, 20.0);
  EXPECT_DOUBLE_EQ(*s.plateau_busbw_gbps, 19.5);  // median of 19, 20, 19.5
  EXPECT_EQ(s.plateau_from_bytes, 1 << 20);
  EXPECT_EQ(s.half_plateau_bytes, 65536);  // first size reaching 9.75 GB/s
  EXPECT_EQ(s.wrong_elements_total, 18);
}

TEST(AllreduceSummary, OneRankHasNoPlateau) {
  interprobe::report::AllreducePoint p;
  p.bytes = 8;
  p.time_us = 2;
  auto s = ic::summarize_sweep({p});
  EXPECT_EQ(s.latency_us, 2.0);
  EXPECT_FALSE(s.plateau_busbw_gbps);
  EXPECT_FALSE(s.half_plateau_bytes);
}

// nccl-tests reports the mean rank's time; interprobe keeps the slowest rank's beside it.
TEST(AllreduceSweep, ReportsTheMeanRankBesideTheSlowestRank) {
  ic::testing::TwoSpeedGroup group(3.0);  // the other process takes 3x as long
  FakeBackend backend(group, 4);
  interprobe::report::AllreduceSweep sweep;
  ic::run_allreduce_sweep(backend, small_plan(), Dtype::float32, sweep);
  ASSERT_FALSE(sweep.points.empty());
  for (const auto& p : sweep.points) {
    ASSERT_TRUE(p.rank_mean_time_us) << p.bytes;
    ASSERT_TRUE(p.rank_mean_busbw_gbps) << p.bytes;
    // Per sample: slowest 3t, mean 2t; the medians keep that ratio.
    EXPECT_NEAR(p.time_us / *p.rank_mean_time_us, 1.5, 1e-9) << p.bytes;
    EXPECT_NEAR(*p.rank_mean_busbw_gbps, p.bytes / (*p.rank_mean_time_us * 1e3) * 2.0 * 3 / 4, 1e-9);
    EXPECT_GT(*p.rank_mean_busbw_gbps, p.busbw_gbps);
  }
}

TEST(AllreduceSweep, OneProcessHasOneTimeForEveryRank) {
  ic::SingleProcessGroup group;
  FakeBackend backend(group, 4);
  interprobe::report::AllreduceSweep sweep;
  ic::run_allreduce_sweep(backend, small_plan(), Dtype::float32, sweep);
  for (const auto& p : sweep.points) {
    ASSERT_TRUE(p.rank_mean_time_us);
    EXPECT_DOUBLE_EQ(*p.rank_mean_time_us, p.time_us);
    EXPECT_DOUBLE_EQ(*p.rank_mean_busbw_gbps, p.busbw_gbps);
  }
}
