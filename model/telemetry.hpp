#pragma once
// The `telemetry` section (issue 19): what NVML counters say limited each GPU, per window, from a
// live sampler (`interprobe observe`) or a recorded trace (`observe --replay`). Each window carries
// the averages the rules read, the class, the rule that decided it with its numbers, and for
// `undecided` the measurement that would decide it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/vocabulary.hpp"

namespace interprobe::report {

enum class TelemetryClass {
  idle,
  thermal_limited,
  power_capped,
  interconnect_bound,
  host_starved,
  compute_bound,
  memory_bound,
  small_kernel_launch_bound,
  latency_occupancy_bound,
  undecided,
};
INTERPROBE_DECLARE_ENUM(TelemetryClass);

enum class TelemetrySource { live, simulated, replay };
INTERPROBE_DECLARE_ENUM(TelemetrySource);

// Window averages; null where the GPU or NVML did not give the counter.
struct TelemetryAverages {
  std::optional<double> utilization_fraction;      // NVML duty cycle: any kernel running
  std::optional<double> power_w;                   // energy-counter delta / time where given, else mean power
  std::optional<double> power_limit_fraction;      // power_w / enforced limit
  std::optional<double> sm_clock_fraction;         // mean SM clock / max SM clock
  std::optional<double> memory_clock_fraction;
  std::optional<double> power_cap_sample_fraction; // samples with the SW power cap reason bit (0x4)
  std::optional<double> thermal_sample_fraction;   // samples with HW slowdown/thermal/brake or SW thermal bits
  std::optional<double> power_cap_time_fraction;   // SW power-cap violation time growth / window
  std::optional<double> thermal_time_fraction;     // thermal violation time growth / window
  std::optional<double> pcie_gbps;                 // larger direction, from byte counters
  std::optional<double> pcie_capacity_fraction;
  std::optional<double> nvlink_gbps;
  std::optional<double> nvlink_capacity_fraction;
  std::optional<double> sm_active_fraction;        // GPM (Hopper+), = DCGM SM_ACTIVE
  std::optional<double> sm_occupancy_fraction;
  std::optional<double> tensor_active_fraction;
  std::optional<double> dram_active_fraction;
};

// What the telemetry sampler saw while one GPU measurement ran (a bandwidth size, an all-reduce
// size, a GEMM shape): the averages of the GPU it loaded most (highest utilization, then power)
// over the measurement's time spans, or null with the reason (no NVML, a measurement shorter than
// one sample interval).
struct MeasurementTelemetry {
  double span_s = 0;                          // time the measurement ran (its spans added)
  std::optional<std::int64_t> gpu;            // NVML index of the summarized GPU
  std::int64_t samples = 0;                   // that GPU's samples inside the spans
  std::optional<TelemetryAverages> averages;  // null: see reason
  std::optional<std::string> reason;
};

struct TelemetryWindow {
  double start_s = 0, end_s = 0;
  std::int64_t samples = 0;
  TelemetryAverages averages;
  TelemetryClass classification = TelemetryClass::undecided;
  std::string rule;    // the threshold-table rule id that decided it ("gpm_small_kernel")
  std::string reason;  // the rule with this window's numbers
  std::vector<std::string> candidates;      // undecided: what it could be
  std::optional<std::string> decide_with;   // undecided: the measurement that would decide it
};

struct TelemetryGpu {
  std::int64_t index = 0;
  std::optional<std::string> bdf;
  std::optional<std::string> name;
  std::optional<double> power_limit_w;
  std::optional<std::int64_t> sm_clock_max_mhz;
  std::optional<double> pcie_capacity_gbps;
  std::optional<double> nvlink_capacity_gbps;
  std::optional<std::string> gpm_reason;       // null when GPM metrics were sampled
  std::vector<std::string> unsupported;        // "field: reason" for counters NVML did not give
  TelemetryWindow overall;                     // the whole run as one window
  std::vector<TelemetryWindow> windows;
};

struct TelemetrySection {
  TelemetrySource source = TelemetrySource::live;
  std::optional<std::string> trace;  // the --replay file, or where --record wrote
  double interval_s = 0;
  double window_s = 0;
  double duration_s = 0;
  std::int64_t samples = 0;
  std::vector<TelemetryGpu> gpus;
};

}  // namespace interprobe::report
