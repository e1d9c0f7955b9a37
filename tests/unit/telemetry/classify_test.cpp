// The telemetry rules on recorded traces (tests/fixtures/telemetry, README there) and on
// hand-built averages at the edges of the threshold table.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "probes/telemetry/classify.hpp"
#include "probes/telemetry/thresholds.hpp"

namespace interprobe::telemetry {
namespace {

using report::TelemetryClass;

report::TelemetrySection classify_fixture(const std::string& name) {
  return classify_trace(read_trace_file(std::string(INTERPROBE_FIXTURES) + "/telemetry/" + name + ".json"), ClassifyOptions{});
}

// Every GPU, the overall window and every window agree on the fixture's class.
void expect_class(const std::string& name, TelemetryClass expected) {
  auto section = classify_fixture(name);
  ASSERT_FALSE(section.gpus.empty()) << name;
  for (const auto& g : section.gpus) {
    EXPECT_EQ(g.overall.classification, expected) << name << " gpu " << g.index << ": " << g.overall.reason;
    ASSERT_FALSE(g.windows.empty());
    for (const auto& w : g.windows) EXPECT_EQ(w.classification, expected) << name << " window at " << w.start_s << ": " << w.reason;
    EXPECT_FALSE(g.overall.rule.empty());
    EXPECT_FALSE(g.overall.reason.empty());
  }
}

TEST(TelemetryClassify, IdleTrace) { expect_class("idle", TelemetryClass::idle); }
TEST(TelemetryClassify, ThermalTrace) { expect_class("thermal", TelemetryClass::thermal_limited); }
TEST(TelemetryClassify, PowerCappedTrace) { expect_class("power_capped", TelemetryClass::power_capped); }
TEST(TelemetryClassify, InterconnectTrace) { expect_class("interconnect", TelemetryClass::interconnect_bound); }
TEST(TelemetryClassify, HostStarvedTrace) { expect_class("host_starved", TelemetryClass::host_starved); }
TEST(TelemetryClassify, ComputeBoundTrace) { expect_class("compute_bound", TelemetryClass::compute_bound); }
TEST(TelemetryClassify, LatencyBoundTrace) { expect_class("latency_bound", TelemetryClass::latency_occupancy_bound); }
TEST(TelemetryClassify, SeedWithGpmSmallKernels) { expect_class("seed_gpm_small_kernel", TelemetryClass::small_kernel_launch_bound); }
TEST(TelemetryClassify, SeedWithGpmHighDramIsMemoryBound) { expect_class("seed_gpm_memory", TelemetryClass::memory_bound); }

TEST(TelemetryClassify, SeedWithoutGpmIsUndecidedBetweenCommunicationAndSmallKernels) {
  expect_class("seed_no_gpm", TelemetryClass::undecided);
  auto section = classify_fixture("seed_no_gpm");
  const auto& w = section.gpus.front().overall;
  EXPECT_EQ(w.rule, "busy_without_gpm");
  EXPECT_EQ(w.candidates, (std::vector<std::string>{"communication/synchronization", "small-kernel/launch-bound"}));
  ASSERT_TRUE(w.decide_with);
  EXPECT_NE(w.decide_with->find("interprobe compute --model"), std::string::npos) << *w.decide_with;
  EXPECT_NE(w.decide_with->find("read by hand"), std::string::npos) << "names why GPM is missing: " << *w.decide_with;
  // The averages the verdict rests on, computed from the trace's counters.
  ASSERT_TRUE(w.averages.power_limit_fraction && w.averages.pcie_gbps && w.averages.power_cap_time_fraction);
  EXPECT_NEAR(*w.averages.power_limit_fraction, 0.55, 0.01);
  EXPECT_NEAR(*w.averages.pcie_gbps * 1e6, 693, 5) << "KB/s, the larger direction";
  EXPECT_DOUBLE_EQ(*w.averages.power_cap_time_fraction, 0.0) << "1.1 s cumulative that does not grow is no cap";
}

// Utilization and power alone never make a GPU compute-bound: a busy GPU at its power limit with
// no GPM activity stays undecided.
TEST(TelemetryClassify, NeverComputeBoundFromUtilizationAndPowerAlone) {
  report::TelemetryAverages a;
  a.utilization_fraction = 1.0;
  a.power_limit_fraction = 0.89;
  a.sm_clock_fraction = 1.0;
  a.pcie_capacity_fraction = 0.01;
  auto w = classify_window(a, 10, std::string("GPM not supported on this vGPU"));
  EXPECT_EQ(w.classification, TelemetryClass::undecided);
  EXPECT_NE(w.decide_with.value_or("").find("vGPU"), std::string::npos);
}

TEST(TelemetryClassify, WindowShorterThanOneSecondIsUndecided) {
  report::TelemetryAverages a;
  a.utilization_fraction = 0.0;
  auto w = classify_window(a, threshold(Threshold::min_window_s) - 0.1, std::nullopt);
  EXPECT_EQ(w.classification, TelemetryClass::undecided);
  EXPECT_EQ(w.rule, "short_window");
  EXPECT_EQ(classify_window(a, threshold(Threshold::min_window_s), std::nullopt).classification, TelemetryClass::idle);
}

// The power-cap rule needs all three signals; each missing one leaves it to the next rule.
TEST(TelemetryClassify, PowerCapNeedsBitsPowerAndClock) {
  report::TelemetryAverages a;
  a.utilization_fraction = 1.0;
  a.power_cap_sample_fraction = threshold(Threshold::power_cap_share);
  a.power_limit_fraction = threshold(Threshold::power_cap_power_fraction);
  a.sm_clock_fraction = threshold(Threshold::power_cap_sm_clock_fraction) - 0.01;
  EXPECT_EQ(classify_window(a, 5, std::nullopt).classification, TelemetryClass::power_capped);
  auto no_clock_drop = a;
  no_clock_drop.sm_clock_fraction = threshold(Threshold::power_cap_sm_clock_fraction);
  EXPECT_NE(classify_window(no_clock_drop, 5, std::nullopt).classification, TelemetryClass::power_capped);
  auto low_power = a;
  low_power.power_limit_fraction = 0.55;
  EXPECT_NE(classify_window(low_power, 5, std::nullopt).classification, TelemetryClass::power_capped);
  auto few_bits = a;
  few_bits.power_cap_sample_fraction = 0.1;
  EXPECT_NE(classify_window(few_bits, 5, std::nullopt).classification, TelemetryClass::power_capped);
}

TEST(TelemetryClassify, LowUtilizationWithUnmeasuredLinksIsUndecided) {
  report::TelemetryAverages a;
  a.utilization_fraction = 0.3;
  auto w = classify_window(a, 5, std::nullopt);
  EXPECT_EQ(w.classification, TelemetryClass::undecided);
  EXPECT_TRUE(w.decide_with);
}

TEST(TelemetryClassify, EveryThresholdCitesASource) {
  std::set<std::string> names;
  for (const auto& row : threshold_table()) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_NE(std::string(row.source).find(row.source[0] == 'i' ? "interprobe" : "docs/reference.md"), std::string::npos) << row.name;
    EXPECT_GT(row.value, 0) << row.name;
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(Threshold::latency_sm_active) + 1) << "every Threshold has a row";
}

// Counters that go backwards (driver reload) give no rate rather than a negative one.
TEST(TelemetryAggregate, CounterResetGivesNoRate) {
  TraceGpu gpu;
  gpu.pcie_capacity_gbps = 63;
  TraceSample a, b;
  a.t_s = 0, b.t_s = 1;
  a.pcie_tx_bytes = 1000000, b.pcie_tx_bytes = 10;
  auto avg = aggregate(gpu, {&a, &b});
  EXPECT_FALSE(avg.pcie_gbps);
  b.pcie_tx_bytes = 1000000 + 6300000000LL;
  avg = aggregate(gpu, {&a, &b});
  ASSERT_TRUE(avg.pcie_capacity_fraction);
  EXPECT_NEAR(*avg.pcie_capacity_fraction, 0.1, 1e-9);
}

TEST(TelemetryAggregate, EnergyCounterGivesPowerOverInstantReadings) {
  TraceGpu gpu;
  gpu.power_limit_w = 700;
  TraceSample a, b;
  a.t_s = 0, b.t_s = 2;
  a.power_w = 100, b.power_w = 100;  // instant readings that missed a burst
  a.energy_mj = 0, b.energy_mj = 1400000;
  auto avg = aggregate(gpu, {&a, &b});
  ASSERT_TRUE(avg.power_w);
  EXPECT_NEAR(*avg.power_w, 700, 1e-9);
  EXPECT_NEAR(*avg.power_limit_fraction, 1.0, 1e-9);
}

}  // namespace
}  // namespace interprobe::telemetry
