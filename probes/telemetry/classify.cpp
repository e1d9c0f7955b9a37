// The rules, in the order they are tried (docs/reference.md §11): a limit that holds the clocks
// (thermal, power cap) explains everything after it, so it is named first; then link traffic,
// then how busy the GPU is, and only with GPM activity what kind of busy.
#include "probes/telemetry/classify.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "probes/telemetry/thresholds.hpp"

namespace interprobe::telemetry {

namespace {

using report::TelemetryClass;
using report::TelemetryWindow;
using T = Threshold;

std::string num(const std::optional<double>& v) { return v ? fmt::format("{:.2f}", *v) : std::string("n/a"); }

bool at_least(const std::optional<double>& v, Threshold t) { return v && *v >= threshold(t); }
bool below(const std::optional<double>& v, Threshold t) { return v && *v < threshold(t); }

TelemetryWindow decided(TelemetryClass c, const char* rule, std::string reason) {
  TelemetryWindow w;
  w.classification = c;
  w.rule = rule;
  w.reason = std::move(reason);
  return w;
}

TelemetryWindow undecided(const char* rule, std::string reason, std::vector<std::string> candidates, std::string decide_with) {
  TelemetryWindow w = decided(TelemetryClass::undecided, rule, std::move(reason));
  w.candidates = std::move(candidates);
  w.decide_with = std::move(decide_with);
  return w;
}

std::optional<TelemetryWindow> limits(const report::TelemetryAverages& a) {
  if (at_least(a.thermal_sample_fraction, T::thermal_share) || at_least(a.thermal_time_fraction, T::thermal_share))
    return decided(TelemetryClass::thermal_limited, "thermal",
                   fmt::format("thermal/slowdown reason bits in {} of samples, thermal violation time {} of the window (>= {:.2f})",
                               num(a.thermal_sample_fraction), num(a.thermal_time_fraction), threshold(T::thermal_share)));
  bool capped = at_least(a.power_cap_sample_fraction, T::power_cap_share) || at_least(a.power_cap_time_fraction, T::power_cap_share);
  if (capped && at_least(a.power_limit_fraction, T::power_cap_power_fraction) && below(a.sm_clock_fraction, T::power_cap_sm_clock_fraction))
    return decided(TelemetryClass::power_capped, "power_cap",
                   fmt::format("SW power cap in {} of samples ({} of the window), power {} of the limit (>= {:.2f}), SM clock {} "
                               "of max (< {:.2f})",
                               num(a.power_cap_sample_fraction), num(a.power_cap_time_fraction), num(a.power_limit_fraction),
                               threshold(T::power_cap_power_fraction), num(a.sm_clock_fraction),
                               threshold(T::power_cap_sm_clock_fraction)));
  auto link = std::max(a.pcie_capacity_fraction.value_or(0), a.nvlink_capacity_fraction.value_or(0));
  if (link >= threshold(T::interconnect_capacity_fraction))
    return decided(TelemetryClass::interconnect_bound, "interconnect",
                   fmt::format("PCIe {} GB/s ({} of capacity), NVLink {} GB/s ({} of capacity): >= {:.2f}", num(a.pcie_gbps),
                               num(a.pcie_capacity_fraction), num(a.nvlink_gbps), num(a.nvlink_capacity_fraction),
                               threshold(T::interconnect_capacity_fraction)));
  return std::nullopt;
}

TelemetryWindow partly_busy(const report::TelemetryAverages& a) {
  double util = *a.utilization_fraction;
  std::string links = fmt::format("PCIe {} and NVLink {} of capacity", num(a.pcie_capacity_fraction), num(a.nvlink_capacity_fraction));
  if (util < threshold(T::host_starved_utilization)) {
    bool known = a.pcie_capacity_fraction || a.nvlink_capacity_fraction;
    bool quiet = known && a.pcie_capacity_fraction.value_or(0) < threshold(T::interconnect_quiet_fraction) &&
                 a.nvlink_capacity_fraction.value_or(0) < threshold(T::interconnect_quiet_fraction);
    if (quiet)
      return decided(TelemetryClass::host_starved, "host_starved",
                     fmt::format("utilization {} (< {:.2f}) with the interconnect quiet ({} < {:.2f})", num(a.utilization_fraction),
                                 threshold(T::host_starved_utilization), links, threshold(T::interconnect_quiet_fraction)));
    return undecided("host_starved_links_unknown",
                     fmt::format("utilization {} (< {:.2f}) but the interconnect is not quiet or not measured ({})",
                                 num(a.utilization_fraction), threshold(T::host_starved_utilization), links),
                     {"host-starved", "waiting on transfers"},
                     known ? "a CPU profile of the feeding process (py-spy/perf) beside `interprobe bw` on the GPU's host path"
                           : "PCIe/NVLink byte counters (NVML fields 197/198, 138/139; not given under vGPU)");
  }
  return undecided("partly_busy",
                   fmt::format("utilization {} between {:.2f} and {:.2f}: busy part of the time, no single limit",
                               num(a.utilization_fraction), threshold(T::host_starved_utilization), threshold(T::busy_utilization)),
                   {"host-starved", "small-kernel/launch-bound"}, "a timeline of launch gaps (nsys) or a window at steadier load");
}

TelemetryWindow busy_without_gpm(const report::TelemetryAverages& a, const std::optional<std::string>& gpm_reason) {
  return undecided(
      "busy_without_gpm",
      fmt::format("utilization {} (>= {:.2f}) at {} of the power limit, {}: NVML utilization counts any running kernel, NCCL's "
                  "busy-waiting ones included, so communication/synchronization and small kernels look the same",
                  num(a.utilization_fraction), threshold(T::busy_utilization), num(a.power_limit_fraction),
                  a.pcie_gbps ? fmt::format("PCIe {:.3g} GB/s ({:.1e} of capacity)", *a.pcie_gbps, a.pcie_capacity_fraction.value_or(0))
                              : std::string("PCIe not measured")),
      {"communication/synchronization", "small-kernel/launch-bound"},
      fmt::format("GPM SM-active/DRAM/tensor activity (absent: {}); or run `interprobe compute --model CONFIG --tp N` at the serving "
                  "batch and `interprobe allreduce` at the model's message sizes, then `interprobe analyze`",
                  gpm_reason.value_or("not sampled")));
}

TelemetryWindow busy_with_gpm(const report::TelemetryAverages& a) {
  std::string gpm = fmt::format("GPM SM active {}, tensor {}, DRAM {}, occupancy {}", num(a.sm_active_fraction),
                                num(a.tensor_active_fraction), num(a.dram_active_fraction), num(a.sm_occupancy_fraction));
  std::string util = fmt::format("utilization {} (>= {:.2f}), ", num(a.utilization_fraction), threshold(T::busy_utilization));
  if (at_least(a.tensor_active_fraction, T::compute_tensor_active) && at_least(a.sm_active_fraction, T::compute_sm_active))
    return decided(TelemetryClass::compute_bound, "gpm_compute",
                   util + gpm + fmt::format(": tensor >= {:.2f} and SM active >= {:.2f}", threshold(T::compute_tensor_active),
                                            threshold(T::compute_sm_active)));
  if (at_least(a.dram_active_fraction, T::memory_dram_active))
    return decided(TelemetryClass::memory_bound, "gpm_memory",
                   util + gpm + fmt::format(": DRAM >= {:.2f}", threshold(T::memory_dram_active)));
  bool low_dram_tensor =
      below(a.dram_active_fraction, T::small_kernel_dram_active) && below(a.tensor_active_fraction, T::small_kernel_tensor_active);
  if (low_dram_tensor && below(a.sm_active_fraction, T::small_kernel_sm_active))
    return decided(TelemetryClass::small_kernel_launch_bound, "gpm_small_kernel",
                   util + gpm + fmt::format(": SM active < {:.2f}, DRAM < {:.2f}, tensor < {:.2f} (busy but mostly idle SMs)",
                                            threshold(T::small_kernel_sm_active), threshold(T::small_kernel_dram_active),
                                            threshold(T::small_kernel_tensor_active)));
  if (low_dram_tensor && at_least(a.sm_active_fraction, T::latency_sm_active))
    return decided(TelemetryClass::latency_occupancy_bound, "gpm_latency",
                   util + gpm + fmt::format(": SM active >= {:.2f} with DRAM < {:.2f} and tensor < {:.2f}",
                                            threshold(T::latency_sm_active), threshold(T::small_kernel_dram_active),
                                            threshold(T::small_kernel_tensor_active)));
  return undecided("gpm_mixed", util + gpm + ": between the GPM rules", {"compute-bound", "memory-bound", "latency/occupancy-bound"},
                   "`interprobe compute --model CONFIG --tp N` at the serving batch (roofline bound of each GEMM)");
}

}  // namespace

report::TelemetryWindow classify_window(const report::TelemetryAverages& a, double span_s,
                                        const std::optional<std::string>& gpm_reason) {
  TelemetryWindow w;
  if (span_s < threshold(T::min_window_s)) {
    w = undecided("short_window", fmt::format("window {:.2f} s is shorter than {:.1f} s", span_s, threshold(T::min_window_s)), {},
                  "a longer --duration");
  } else if (!a.utilization_fraction) {
    w = undecided("no_utilization", "NVML gave no utilization (not supported on MIG)", {},
                  "GPM SM activity or DCGM profiling metrics on this GPU");
  } else if (below(a.utilization_fraction, T::idle_utilization)) {
    w = decided(TelemetryClass::idle, "idle",
                fmt::format("utilization {} < {:.2f}", num(a.utilization_fraction), threshold(T::idle_utilization)));
  } else if (auto limit = limits(a)) {
    w = std::move(*limit);
  } else if (*a.utilization_fraction < threshold(T::busy_utilization)) {
    w = partly_busy(a);
  } else if (!a.sm_active_fraction || !a.dram_active_fraction || !a.tensor_active_fraction) {
    w = busy_without_gpm(a, gpm_reason);
  } else {
    w = busy_with_gpm(a);
  }
  w.averages = a;
  return w;
}

}  // namespace interprobe::telemetry
