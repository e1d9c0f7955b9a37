#pragma once
// The seam between probes that measure GPUs and whatever samples the machine beside them (the
// telemetry recorder, issue 19): a probe marks when each measurement ran and gets back a summary
// of the counters in that time. It never sees NVML and never formats.
#include <chrono>
#include <optional>
#include <vector>

#include "model/telemetry.hpp"

namespace interprobe {

struct TimeSpan {
  std::chrono::steady_clock::time_point begin, end;
};

class MeasurementWindows {
 public:
  virtual ~MeasurementWindows() = default;
  // Called before a probe measures GPUs: starts sampling (the first call; later ones do nothing).
  virtual void start() = 0;
  // The counters in the spans one measurement ran in (a size visited in several passes has
  // several), or null averages with the reason.
  virtual report::MeasurementTelemetry summarize(const std::vector<TimeSpan>& spans) const = 0;
};

// The spans of one measurement: begin() before and end() after each timed stretch.
class SpanLog {
 public:
  void begin() { open_ = std::chrono::steady_clock::now(); }
  void end() { spans_.push_back({open_, std::chrono::steady_clock::now()}); }
  const std::vector<TimeSpan>& spans() const { return spans_; }

 private:
  std::chrono::steady_clock::time_point open_;
  std::vector<TimeSpan> spans_;
};

// What a measurement's point carries: null when nothing samples beside the probe (replays, tests).
inline std::optional<report::MeasurementTelemetry> summarize_spans(const MeasurementWindows* windows, const SpanLog& log) {
  if (!windows || log.spans().empty()) return std::nullopt;
  return windows->summarize(log.spans());
}

}  // namespace interprobe
