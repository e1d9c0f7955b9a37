// The telemetry classes beside a workload's ranking: agreement, the undecided seed picked by the
// ranking's first category, limits that make the curves optimistic, and no ranking to tie to.
#include <gtest/gtest.h>

#include "report/analysis/bottleneck/telemetry_tie.hpp"

namespace {

using interprobe::bottleneck::tie_telemetry;
using interprobe::report::StepCategory;
using interprobe::report::TelemetryClass;

interprobe::report::TelemetrySection observed(std::vector<TelemetryClass> classes) {
  interprobe::report::TelemetrySection t;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    interprobe::report::TelemetryGpu g;
    g.index = static_cast<std::int64_t>(i);
    g.overall.classification = classes[i];
    if (classes[i] == TelemetryClass::undecided) {
      g.overall.candidates = {"communication/synchronization", "small-kernel/launch-bound"};
      g.overall.decide_with = "GPM SM-active/DRAM/tensor activity";
    }
    t.gpus.push_back(g);
  }
  return t;
}

interprobe::report::WorkloadEstimate ranked(std::optional<StepCategory> first) {
  interprobe::report::WorkloadEstimate w;
  interprobe::report::BatchEstimate b;
  b.batch = 8;
  b.bottleneck = first;
  w.batches.push_back(b);
  return w;
}

}  // namespace

TEST(TelemetryTie, SeedUndecidedIsPickedByACommunicationRanking) {
  auto text = tie_telemetry(observed(std::vector<TelemetryClass>(8, TelemetryClass::undecided)), ranked(StepCategory::communication_latency));
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("observed: 8 GPUs undecided (could be communication/synchronization or small-kernel/launch-bound)"),
            std::string::npos) << *text;
  EXPECT_NE(text->find("at batch 8 the ranking's communication_latency picks communication/synchronization"), std::string::npos) << *text;
  EXPECT_NE(text->find("GPM SM-active"), std::string::npos) << *text;
}

TEST(TelemetryTie, AgreementAndDisagreementWithTheFirstCategory) {
  auto agree = tie_telemetry(observed({TelemetryClass::memory_bound, TelemetryClass::memory_bound}), ranked(StepCategory::gemm_memory_bound));
  ASSERT_TRUE(agree);
  EXPECT_NE(agree->find("2 GPUs memory_bound; at batch 8 consistent with the ranking, which puts gemm_memory_bound first"), std::string::npos)
      << *agree;
  auto differ = tie_telemetry(observed({TelemetryClass::compute_bound}), ranked(StepCategory::communication_bandwidth));
  ASSERT_TRUE(differ);
  EXPECT_NE(differ->find("GPU 0 compute_bound; at batch 8 not what the ranking expects (communication_bandwidth first)"), std::string::npos)
      << *differ;
}

TEST(TelemetryTie, LimitsHostStarvationAndNoRanking) {
  auto capped = tie_telemetry(observed({TelemetryClass::power_capped, TelemetryClass::power_capped, TelemetryClass::idle}),
                              ranked(StepCategory::gemm_memory_bound));
  ASSERT_TRUE(capped);
  EXPECT_NE(capped->find("GPU 2 idle, 2 GPUs power_capped"), std::string::npos) << *capped;
  EXPECT_NE(capped->find("below their clocks"), std::string::npos) << *capped;
  auto starved = tie_telemetry(observed({TelemetryClass::host_starved}), ranked(StepCategory::gemm_memory_bound));
  EXPECT_NE(starved.value_or("").find("host side"), std::string::npos);
  auto unpriced = tie_telemetry(observed({TelemetryClass::idle}), ranked(std::nullopt));
  EXPECT_NE(unpriced.value_or("").find("the ranking names no first category"), std::string::npos);
  EXPECT_FALSE(tie_telemetry(interprobe::report::TelemetrySection{}, ranked(StepCategory::gemm_memory_bound)));
}
