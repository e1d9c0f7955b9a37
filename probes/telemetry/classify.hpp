#pragma once
// Window aggregation and the rules (docs/reference.md §11, numbers in thresholds.cpp). Pure: the same
// trace gives the same section. Compute-bound is only ever concluded from GPM activity, never from
// utilization and power: NVML utilization counts any running kernel, NCCL's waiting ones included.
#include <optional>
#include <string>
#include <vector>

#include "probes/telemetry/trace.hpp"
#include "model/telemetry.hpp"

namespace interprobe::telemetry {

// Averages of one GPU's samples (in time order) against its static limits.
report::TelemetryAverages aggregate(const TraceGpu& gpu, const std::vector<const TraceSample*>& samples);

// `span_s`: the time the window covers (first to last sample plus one interval).
// `gpm_reason`: why GPM metrics are absent, for the `undecided` advice.
report::TelemetryWindow classify_window(const report::TelemetryAverages& a, double span_s,
                                        const std::optional<std::string>& gpm_reason);

struct ClassifyOptions {
  double window_s = 5;
};

// Per GPU: the whole trace as one window plus consecutive windows of window_s.
report::TelemetrySection classify_trace(const Trace& trace, const ClassifyOptions& options);

}  // namespace interprobe::telemetry
