// The recorder behind the probes' measurement windows, against the simulated libnvidia-ml in
// process: a span holding samples gets the busiest GPU's averages, a span between two samples gets
// the reason, two spans of one measurement are merged without bridging the gap, no NVML is a reason.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "probes/telemetry/measurement_recorder.hpp"
#include "support/temp_tree.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using interprobe::TimeSpan;
using interprobe::telemetry::MeasurementRecorder;

// The simulated NVML with two H100s busy at a constant 100 % (GPM on), for this process.
class SimulatedNvml {
 public:
  SimulatedNvml() {
    std::ifstream in(std::string(INTERPROBE_SIM_DEVICES) + "/h100-sxm-8x-nvswitch.json");
    auto d = nlohmann::json::parse(in);
    d["devices"] = nlohmann::json::array({d["devices"][0], d["devices"][1]});
    d["nvml"]["busy_percent"] = 100;
    config_ = tree_.path() / "busy.json";
    std::ofstream(config_) << d.dump();
    ::setenv("INTERPROBE_NVML_LIB", INTERPROBE_SIM_NVML, 1);
    ::setenv("INTERPROBE_SIM_CONFIG", config_.c_str(), 1);
  }
  ~SimulatedNvml() {
    ::unsetenv("INTERPROBE_NVML_LIB");
    ::unsetenv("INTERPROBE_SIM_CONFIG");
  }

 private:
  interprobe::testing::TempTree tree_;
  std::filesystem::path config_;
};

TimeSpan hold(double seconds) {
  auto begin = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return {begin, Clock::now()};
}

}  // namespace

TEST(MeasurementRecorder, SpansWithSamplesCarryTheBusiestGpusAverages) {
  SimulatedNvml sim;
  MeasurementRecorder recorder(0.05);
  recorder.start();
  recorder.start();  // a second probe: still one sampler
  auto first = hold(0.3);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // another size's visit
  auto second = hold(0.3);
  auto t = recorder.summarize({first, second});
  ASSERT_TRUE(t.averages) << t.reason.value_or("");
  EXPECT_FALSE(t.reason);
  ASSERT_TRUE(t.gpu);
  EXPECT_GE(t.samples, 8);  // about 6 per span at 50 ms
  EXPECT_NEAR(t.span_s, 0.6, 0.1);
  const auto& a = *t.averages;
  ASSERT_TRUE(a.utilization_fraction && a.power_limit_fraction && a.sm_clock_fraction && a.pcie_gbps);
  EXPECT_NEAR(*a.utilization_fraction, 1.0, 1e-9);
  EXPECT_NEAR(*a.power_limit_fraction, 1.0, 0.05);
  EXPECT_NEAR(*a.pcie_gbps, 1.0, 0.1);  // the simulator's 1 GB/s at full utilization
  ASSERT_TRUE(a.sm_active_fraction);
  EXPECT_NEAR(*a.sm_active_fraction, 0.3, 0.02);
}

TEST(MeasurementRecorder, ASpanShorterThanOneSampleGetsTheReason) {
  SimulatedNvml sim;
  MeasurementRecorder recorder(2.0);  // one sample at start, the next in 2 s
  recorder.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto t = recorder.summarize({hold(0.01)});
  EXPECT_FALSE(t.averages);
  ASSERT_TRUE(t.reason);
  EXPECT_NE(t.reason->find("shorter than one sample interval"), std::string::npos) << *t.reason;
}

TEST(MeasurementRecorder, WithoutNvmlEverySummaryGivesTheReason) {
  ::setenv("INTERPROBE_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
  MeasurementRecorder recorder;
  recorder.start();
  auto t = recorder.summarize({hold(0.01)});
  ::unsetenv("INTERPROBE_NVML_LIB");
  EXPECT_FALSE(t.averages);
  ASSERT_TRUE(t.reason);
  EXPECT_NE(t.reason->find("no telemetry: telemetry needs NVML"), std::string::npos) << *t.reason;
  MeasurementRecorder never_started;
  EXPECT_NE(never_started.summarize({hold(0.001)}).reason.value_or("").find("not started"), std::string::npos);
}
