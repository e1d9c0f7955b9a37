#pragma once
// A telemetry trace: the raw samples a sampler read, per GPU, with cumulative counters kept as
// NVML gives them (energy, violation time, PCIe/NVLink bytes), so that `observe --record` writes
// exactly what was read and `--replay` runs the same rules on it. JSON: the keys are the members
// below (trace.cpp declares them, one INTERPROBE_JSON line per struct; an absent reading is left
// out), with "format": "interprobe-telemetry-trace" and "version": 1 beside them; trace_schema()
// is the format as a JSON Schema.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace interprobe::telemetry {

inline constexpr const char* kTraceFormat = "interprobe-telemetry-trace";
inline constexpr std::int64_t kTraceVersion = 1;

// NVML clocks-event reason bits (nvmlClocksEventReason*, docs/reference.md §11).
inline constexpr std::int64_t kReasonIdle = 0x1;
inline constexpr std::int64_t kReasonSwPowerCap = 0x4;
inline constexpr std::int64_t kReasonHwSlowdown = 0x8;
inline constexpr std::int64_t kReasonSwThermal = 0x20;
inline constexpr std::int64_t kReasonHwThermal = 0x40;
inline constexpr std::int64_t kReasonHwPowerBrake = 0x80;
inline constexpr std::int64_t kReasonThermalMask = kReasonHwSlowdown | kReasonSwThermal | kReasonHwThermal | kReasonHwPowerBrake;

struct TraceGpu {
  std::int64_t index = 0;
  std::optional<std::string> bdf, name;
  std::optional<double> power_limit_w;           // enforced limit
  std::optional<std::int64_t> sm_clock_max_mhz, memory_clock_max_mhz;
  std::optional<double> pcie_capacity_gbps;      // per direction
  std::optional<double> nvlink_capacity_gbps;    // per direction, all links
  std::optional<std::string> gpm_reason;         // why GPM metrics are absent (null: sampled)
  std::vector<std::string> unsupported;          // "field: reason"
};

struct TraceSample {
  double t_s = 0;  // since the sampler started
  std::int64_t gpu = 0;
  std::optional<double> utilization_fraction;
  std::optional<double> power_w;
  std::optional<double> energy_mj;                 // cumulative
  std::optional<std::int64_t> sm_clock_mhz, memory_clock_mhz;
  std::optional<std::int64_t> clock_event_reasons; // bit mask
  std::optional<std::int64_t> power_cap_violation_ns, thermal_violation_ns;  // cumulative
  std::optional<std::int64_t> pcie_tx_bytes, pcie_rx_bytes;                  // cumulative
  std::optional<std::int64_t> nvlink_tx_bytes, nvlink_rx_bytes;              // cumulative
  std::optional<double> sm_active_fraction, sm_occupancy_fraction, tensor_active_fraction, dram_active_fraction;  // GPM
};

struct Trace {
  std::string source = "nvml";  // "nvml", "simulated", or what a fixture imitates
  std::optional<std::string> description;
  double interval_s = 0.1;
  std::vector<TraceGpu> gpus;
  std::vector<TraceSample> samples;  // in time order per GPU
};

// Throws InputError naming the file and the bad field.
Trace read_trace_file(const std::filesystem::path& path);
Trace parse_trace(const std::string& text, const std::string& label);
std::string trace_to_json_text(const Trace& trace);
// What the reader accepts: the declarations' schema with the keys a file must hold, no negative
// number and fractions at most 1.
nlohmann::json trace_schema();
void write_trace_file(const std::filesystem::path& path, const Trace& trace);

}  // namespace interprobe::telemetry
