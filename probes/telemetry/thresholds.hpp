#pragma once
// Every number the telemetry rules compare against, in one table with where it comes from
// (thresholds.cpp). Rules read values through threshold(); docs/observe.md and `observe` print the table.
#include <span>

namespace interprobe::telemetry {

enum class Threshold {
  min_window_s,
  idle_utilization,
  thermal_share,
  power_cap_share,
  power_cap_power_fraction,
  power_cap_sm_clock_fraction,
  interconnect_capacity_fraction,
  interconnect_quiet_fraction,
  host_starved_utilization,
  busy_utilization,
  compute_tensor_active,
  compute_sm_active,
  memory_dram_active,
  small_kernel_sm_active,
  small_kernel_dram_active,
  small_kernel_tensor_active,
  latency_sm_active,
};

struct ThresholdRow {
  Threshold id;
  const char* name;
  double value;
  const char* rule;    // how the rules use it
  const char* source;  // where the number comes from
};

std::span<const ThresholdRow> threshold_table();
double threshold(Threshold id);

}  // namespace interprobe::telemetry
