#pragma once
// The live telemetry source: NVML (dlopen'd) read for every GPU every interval on a thread of its
// own, into a Trace. Reads only: it sets no clock, limit or mode, so it can run beside a workload.
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "probes/telemetry/trace.hpp"

namespace interprobe::telemetry {

class NvmlSampler {
 public:
  // Opens and initializes NVML and reads each GPU's static limits; throws UnsupportedError with
  // the reason when NVML cannot be loaded or initialized or sees no GPU.
  explicit NvmlSampler(double interval_s);
  ~NvmlSampler();  // stops the thread
  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;

  void start();
  // Stops sampling and returns what was read (one last sample is taken at stop).
  Trace stop();
  // While sampling (thread-safe): the GPUs, and the samples taken between from_s and to_s after
  // started_at() (sample times are seconds since then).
  std::vector<TraceGpu> gpus() const;
  std::vector<TraceSample> samples_between(double from_s, double to_s) const;
  std::chrono::steady_clock::time_point started_at() const;
  double interval_s() const;
  // The simulator's version when the loaded NVML is interprobe's test double.
  const std::optional<std::string>& simulated() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace interprobe::telemetry
