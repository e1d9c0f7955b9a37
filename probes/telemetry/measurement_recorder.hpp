#pragma once
// The telemetry recorder behind MeasurementWindows: an NVML sampler started when the first GPU
// measurement begins and stopped with the session; each measurement's summary is the window
// averages (aggregate.cpp) of the GPU it loaded most in its spans.
#include <memory>
#include <optional>
#include <string>

#include "probes/runner/measurement_windows.hpp"

namespace interprobe::telemetry {

class NvmlSampler;

class MeasurementRecorder final : public MeasurementWindows {
 public:
  explicit MeasurementRecorder(double interval_s = 0.1);
  ~MeasurementRecorder() override;
  void start() override;
  report::MeasurementTelemetry summarize(const std::vector<TimeSpan>& spans) const override;

 private:
  double interval_s_;
  bool started_ = false;
  std::unique_ptr<NvmlSampler> sampler_;
  std::optional<std::string> unavailable_;  // why nothing is sampled
};

}  // namespace interprobe::telemetry
