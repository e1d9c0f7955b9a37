// The one table of telemetry thresholds. Numbers from docs/reference.md §11 (which condenses NVIDIA's
// NVML/DCGM documentation and the measurements cited there); the two marked "interprobe" are this
// tool's choices where the sources name a signal but no number, stated so they can be argued with.
#include "probes/telemetry/thresholds.hpp"

#include <stdexcept>

namespace interprobe::telemetry {

namespace {

constexpr const char* kRef = "docs/reference.md §11 (classification per window)";

constexpr ThresholdRow kTable[] = {
    {Threshold::min_window_s, "min_window_s", 1.0, "a window shorter than this is undecided",
     "docs/reference.md §11: NVML utilization is a duty cycle over 1/6-1 s, so classify windows >= 1 s"},
    {Threshold::idle_utilization, "idle_utilization", 0.05, "idle: utilization below", kRef},
    {Threshold::thermal_share, "thermal_share", 0.20,
     "thermal-limited: HW slowdown/thermal/power-brake or SW thermal bits in at least this share of samples, or thermal "
     "violation time growing for this share of the window",
     "interprobe: docs/reference.md §11 names the bits and counters but no share; the power-cap share is reused"},
    {Threshold::power_cap_share, "power_cap_share", 0.20,
     "power-capped: SW power cap bit (0x4) in at least this share of samples (or violation time for this share)", kRef},
    {Threshold::power_cap_power_fraction, "power_cap_power_fraction", 0.90, "power-capped: power at least this of the enforced limit", kRef},
    {Threshold::power_cap_sm_clock_fraction, "power_cap_sm_clock_fraction", 0.95, "power-capped: SM clock below this of its maximum", kRef},
    {Threshold::interconnect_capacity_fraction, "interconnect_capacity_fraction", 0.60,
     "interconnect-bound: PCIe or NVLink bytes at least this of the link's capacity", kRef},
    {Threshold::interconnect_quiet_fraction, "interconnect_quiet_fraction", 0.10,
     "host-starved needs the interconnect quiet: PCIe and NVLink below this of capacity",
     "interprobe: docs/reference.md §11 says 'interconnect quiet' without a number"},
    {Threshold::host_starved_utilization, "host_starved_utilization", 0.60, "host-starved: utilization below (interconnect quiet)", kRef},
    {Threshold::busy_utilization, "busy_utilization", 0.90, "GPM rules apply at utilization at least", kRef},
    {Threshold::compute_tensor_active, "compute_tensor_active", 0.50, "compute-bound: GPM tensor active at least (with SM active)", kRef},
    {Threshold::compute_sm_active, "compute_sm_active", 0.80, "compute-bound: GPM SM active at least (with tensor active)", kRef},
    {Threshold::memory_dram_active, "memory_dram_active", 0.60, "memory-bound: GPM DRAM active at least", kRef},
    {Threshold::small_kernel_sm_active, "small_kernel_sm_active", 0.50, "small-kernel/launch-bound: GPM SM active below", kRef},
    {Threshold::small_kernel_dram_active, "small_kernel_dram_active", 0.40,
     "small-kernel/launch-bound and latency/occupancy-bound: GPM DRAM active below", kRef},
    {Threshold::small_kernel_tensor_active, "small_kernel_tensor_active", 0.20,
     "small-kernel/launch-bound and latency/occupancy-bound: GPM tensor active below", kRef},
    {Threshold::latency_sm_active, "latency_sm_active", 0.80, "latency/occupancy-bound: GPM SM active at least, DRAM and tensor low", kRef},
};

}  // namespace

std::span<const ThresholdRow> threshold_table() { return kTable; }

double threshold(Threshold id) {
  for (const auto& row : kTable)
    if (row.id == id) return row.value;
  throw std::logic_error("telemetry threshold missing from the table");
}

}  // namespace interprobe::telemetry
