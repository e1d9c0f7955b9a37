#pragma once
// The telemetry probe of `interprobe observe`: samples NVML live for a duration, or classifies a
// recorded trace (--replay FILE, or <root>/telemetry.json when replaying a --root tree).
#include <memory>
#include <optional>
#include <string>

#include "probes/runner/probe.hpp"
#include "probes/telemetry/trace.hpp"

namespace interprobe {

inline constexpr const char* kTelemetryTracePath = "/telemetry.json";  // inside a --root tree or snapshot

struct TelemetryOptions {
  double duration_s = 30;
  double interval_s = 0.1;
  double window_s = 5;
  std::optional<std::string> record;  // write the raw samples here
  std::optional<std::string> replay;  // classify this trace instead of sampling
};

// Throws InputError on values out of range (interval 0.01-10 s, duration up to a day, window >= 1 s).
void validate_telemetry_options(const TelemetryOptions& options);
std::unique_ptr<Probe> make_telemetry_probe(const TelemetryOptions& options);

// Samples every GPU for duration_s and returns the trace as `observe --record` writes it (what
// `snapshot` stores at kTelemetryTracePath). Throws UnsupportedError without NVML, and
// InterruptedError on Ctrl-C.
std::string record_live_trace_json(double duration_s, double interval_s);

}  // namespace interprobe
