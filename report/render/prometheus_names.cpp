// How a metrics-view row is named and scaled in Prometheus (issue 36): base units in every name
// (seconds, bytes, bytes per second, hertz, ...; the view's abbreviations gbps, us, gts, tflops
// become them and the value is converted), `_count`/`_total` never on a gauge, and the HELP text
// of every family. promtool check metrics runs over every repository report's output
// (tests/cli/prometheus_cli_test.cpp).
#include <span>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "common/text.hpp"
#include "model/bottleneck.hpp"
#include "report/render/prometheus.hpp"

namespace interprobe::render {

namespace {

// A view unit in Prometheus: the name suffix and the factor to the base unit.
struct BaseUnit {
  std::string_view view_unit;
  std::string_view suffix;  // empty: a plain number (a count), no suffix
  double multiply = 1;
  double divide = 1;  // separate, so 28256 us is 0.028256 s and not 0.028256000000000002
};

// The view's units (model/metrics.hpp) and the base unit each becomes. gbps and GT/s are
// 1e9 per second (decimal, as the report writes them), tflops 1e12 floating-point operations/s.
constexpr BaseUnit kBaseUnits[] = {
    {"s", "seconds"},
    {"us", "seconds", 1, 1e6},
    {"gbps", "bytes_per_second", 1e9},
    {"gts", "transfers_per_second", 1e9},
    {"ghz", "hertz", 1e9},
    {"tflops", "floating_point_operations_per_second", 1e12},
    {"tokens_per_s", "tokens_per_second"},
    {"w", "watts"},
    {"fraction", "ratio"},
    {"bytes", "bytes"},
    {"count", ""},
};

const BaseUnit* base_unit_of(std::string_view view_unit) {
  for (const auto& u : kBaseUnits)
    if (u.view_unit == view_unit) return &u;
  return nullptr;  // a unit newer than this table: kept as the view writes it
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The last path segment in base units: "time_us" -> "time_seconds", "gbps" -> "bytes_per_second",
// "nvlink_count" -> "nvlinks" (Prometheus keeps `_count` for histograms), "logical_cpus" as it is.
std::string leaf_in_base_units(const std::string& leaf, const std::string& unit) {
  const BaseUnit* base = base_unit_of(unit);
  std::string suffix = base ? std::string(base->suffix) : unit;
  if (leaf == unit) return suffix;
  if (!ends_with(leaf, "_" + unit)) return leaf;
  std::string stem = leaf.substr(0, leaf.size() - unit.size() - 1);
  return suffix.empty() ? stem + "s" : stem + "_" + suffix;
}

// Metric names allow [a-zA-Z0-9_:], label names [a-zA-Z0-9_]; anything else becomes '_'.
std::string name_chars(std::string name, bool colon_allowed) {
  for (char& c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              (colon_allowed && c == ':');
    if (!ok) c = '_';
  }
  return name;
}

// The P2P pair rows' leaves as the per-pair families call them.
std::string p2p_leaf(const std::string& leaf) {
  if (leaf == "p2p_gbps") return "peer_bandwidth_gbps";
  if (leaf == "staged_gbps") return "staged_bandwidth_gbps";
  if (leaf == "p2p_latency_us") return "peer_latency_us";
  return leaf;  // staged_latency_us
}

}  // namespace

std::optional<std::string> prometheus_bottleneck_part(const report::MetricRow& row) {
  if (row.family != "bottleneck" || row.unit != "us" || !ends_with(row.leaf, "_us")) return std::nullopt;
  std::string part = row.leaf.substr(0, row.leaf.size() - 3);
  if (!report::parse_enum<report::StepCategory>(part)) return std::nullopt;
  return part;
}

std::string prometheus_family_name(const report::MetricRow& row) {
  if (row.family.empty()) return "interprobe_unnamed";
  // The step's categories are one family with the category as `part`, not one family each.
  if (prometheus_bottleneck_part(row)) return "interprobe_bottleneck_part_seconds";
  std::string leaf = row.family == "p2p" ? p2p_leaf(row.leaf) : row.leaf;
  std::string name = fmt::format("interprobe_{}_{}", row.family, leaf_in_base_units(leaf, row.unit));
  return name_chars(name, /*colon_allowed=*/true);  // starts with "interprobe_": never a digit
}

double prometheus_value(const report::MetricRow& row) {
  const BaseUnit* base = base_unit_of(row.unit);
  return base ? row.value * base->multiply / base->divide : row.value;
}

std::string prometheus_label_name(std::string_view key) {
  if (key == "bytes") return "size_bytes";
  std::string name = name_chars(std::string(key), /*colon_allowed=*/false);
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) name.insert(0, "_");
  while (name.rfind("__", 0) == 0) name.erase(0, 1);  // "__" starts names Prometheus reserves
  return name;
}

std::string prometheus_label_value(std::string_view raw) { return printable(raw, {.keep_newlines = true}); }

namespace {

// Help texts by section, name -> text; prometheus_help_texts() joins them.
using HelpRow = std::pair<std::string_view, std::string_view>;

// The report and its probes.
constexpr HelpRow kReportHelp[] = {
    {"interprobe_info", "Always 1: the interprobe version, report schema, hypervisor and machine type, whether the report "
                        "was measured live (not replayed from --root), whether simulated vendor libraries were loaded and whether "
                        "parts of it were constructed (a fixture or example) rather than measured"},
    {"interprobe_report_timestamp_seconds",
     "When the report's measurement started (host.started_at), seconds since the Unix epoch: not when it was rendered"},
    {"interprobe_probe_ok", "1 when the probe finished (status ok), 0 when it was unsupported, skipped or failed"},
    {"interprobe_probe_status", "1 for the probe's status (ok, unsupported, skipped, failed), 0 for the others"},
    {"interprobe_finding", "1 for each finding of the report (id and severity as in the report)"},
    {"interprobe_probe_duration_seconds", "Wall time each probe took, seconds"},
};

// The system, topology and virtualization sections (read, not timed).
constexpr HelpRow kMachineHelp[] = {
    {"interprobe_system_logical_cpus", "Logical CPUs the kernel sees"},
    {"interprobe_system_memory_bytes", "Memory the kernel reports, bytes"},
    {"interprobe_topology_gpu_link_current_transfers_per_second",
     "PCIe link speed each GPU trained to, transfers/s per lane (read, not timed)"},
    {"interprobe_topology_gpu_link_max_transfers_per_second", "Highest PCIe link speed each GPU supports, transfers/s per lane"},
    {"interprobe_topology_gpu_link_current_bytes_per_second", "Each GPU's PCIe link rate at its current speed and width, bytes/s"},
    {"interprobe_topology_gpu_memory_bytes", "Memory of each GPU, bytes"},
    {"interprobe_topology_gpu_pair_bottleneck_bytes_per_second",
     "Slowest link between two GPUs by its link rate, bytes/s (read, not timed)"},
    {"interprobe_topology_gpu_pair_pcie_bottleneck_bytes_per_second", "Slowest PCIe link between two GPUs by its link rate, bytes/s"},
    {"interprobe_topology_gpu_pair_nvlinks", "NVLinks between two GPUs"},
    {"interprobe_topology_numa_node_memory_bytes", "Memory of each NUMA node, bytes"},
    {"interprobe_virtualization_gpu_bar1_bytes", "BAR1 size of each GPU as the guest sees it, bytes"},
};

// P2P and the copy sweeps.
constexpr HelpRow kCopiesHelp[] = {
    {"interprobe_p2p_supported",
     "1 when NVML reports the P2P capability (kind) between two GPUs as OK, 0 for any other status (the report's "
     "topology.gpu_pairs[].p2p says which)"},
    {"interprobe_p2p_peer_bandwidth_bytes_per_second", "Measured GPU-to-GPU copy bandwidth with peer access at the largest size, bytes/s"},
    {"interprobe_p2p_staged_bandwidth_bytes_per_second",
     "Measured GPU-to-GPU copy bandwidth staged through host memory at the largest size, bytes/s"},
    {"interprobe_p2p_peer_latency_seconds", "Measured GPU-to-GPU small-copy time with peer access, seconds"},
    {"interprobe_p2p_staged_latency_seconds", "Measured GPU-to-GPU small-copy time staged through host memory, seconds"},
    {"interprobe_p2p_truth", "1 for what the copies showed of P2P between two GPUs (p2p, claimed_but_staged, staged, corrupt), 0 for the others"},
    {"interprobe_bandwidth_cpu_clock_hertz", "Clock the host copies ran at, from the measured copy-loop cycle, hertz"},
    {"interprobe_bandwidth_bytes_per_second", "Measured copy bandwidth (median) per path and size, bytes/s"},
    {"interprobe_bandwidth_time_seconds", "Median time of one copy per path and size, seconds"},
    {"interprobe_bandwidth_fit_peak_bytes_per_second", "Peak bandwidth of the latency-bandwidth fit over a sweep, bytes/s"},
    {"interprobe_bandwidth_fit_t0_seconds", "Fixed cost per copy of the latency-bandwidth fit over a sweep, seconds"},
    {"interprobe_bandwidth_expected_bytes_per_second",
     "Expected bandwidth of a sweep's path: its slowest link's rate, not measured (provenance=\"not_measured\"), bytes/s"},
};

// The all-reduce sweeps.
constexpr HelpRow kCollectivesHelp[] = {
    {"interprobe_allreduce_time_seconds", "All-reduce time per size (slowest rank), seconds"},
    {"interprobe_allreduce_busbw_bytes_per_second", "All-reduce bus bandwidth per size, bytes/s"},
    {"interprobe_allreduce_algbw_bytes_per_second", "All-reduce algorithm bandwidth per size, bytes/s"},
    {"interprobe_allreduce_rank_mean_time_seconds", "All-reduce time per size averaged over the ranks, seconds"},
    {"interprobe_allreduce_rank_mean_busbw_bytes_per_second", "All-reduce bus bandwidth per size from the ranks' mean time, bytes/s"},
    {"interprobe_allreduce_latency_seconds", "All-reduce time at the smallest size, seconds"},
    {"interprobe_allreduce_peak_busbw_bytes_per_second", "Highest all-reduce bus bandwidth of the sweep, bytes/s"},
    {"interprobe_allreduce_plateau_busbw_bytes_per_second", "All-reduce bus bandwidth at the large sizes, bytes/s"},
    {"interprobe_allreduce_half_plateau_bytes", "Smallest all-reduce size reaching half the plateau bandwidth, bytes"},
};

// The compute section.
constexpr HelpRow kComputeHelp[] = {
    {"interprobe_compute_memory_bytes_per_second", "Device memory bandwidth measured by the compute engine, bytes/s"},
    {"interprobe_compute_launch_floor_seconds", "Shortest time of an empty kernel launch (host: call), seconds"},
    {"interprobe_compute_launch_floor_graph_seconds", "Shortest time per kernel of a launch from a CUDA graph, seconds"},
    {"interprobe_compute_peak_floating_point_operations_per_second", "Measured GEMM peak per data type, floating-point operations/s"},
    {"interprobe_compute_gemm_time_seconds", "Median GEMM time per shape and M, seconds"},
    {"interprobe_compute_gemm_floating_point_operations_per_second", "GEMM throughput per shape and M, floating-point operations/s"},
    {"interprobe_compute_gemm_peak_ratio", "GEMM throughput as a fraction of the measured peak"},
    {"interprobe_compute_gemm_memory_bandwidth_ratio", "GEMM operand traffic as a fraction of the measured memory bandwidth"},
    {"interprobe_compute_gemm_bound", "1 for the roofline bound (memory, compute, latency) each GEMM point falls under, 0 for the others"},
};

// Telemetry.
constexpr HelpRow kTelemetryHelp[] = {
    {"interprobe_telemetry_gpu_utilization_ratio", "NVML utilization averaged over the run (any kernel running counts)"},
    {"interprobe_telemetry_gpu_power_watts", "Power draw averaged over the run, watts"},
    {"interprobe_telemetry_gpu_power_limit_ratio", "Power draw as a fraction of the power limit, averaged over the run"},
    {"interprobe_telemetry_gpu_sm_clock_ratio", "SM clock as a fraction of its maximum, averaged over the run"},
    {"interprobe_telemetry_gpu_power_cap_time_ratio", "Fraction of the run the power cap throttled the clocks"},
    {"interprobe_telemetry_gpu_thermal_time_ratio", "Fraction of the run thermal limits throttled the clocks"},
    {"interprobe_telemetry_gpu_pcie_bytes_per_second", "PCIe traffic averaged over the run, bytes/s"},
    {"interprobe_telemetry_gpu_nvlink_bytes_per_second", "NVLink traffic averaged over the run, bytes/s"},
    {"interprobe_telemetry_gpu_sm_active_ratio", "Fraction of time SMs had a warp resident, averaged over the run"},
    {"interprobe_telemetry_gpu_tensor_active_ratio", "Fraction of time tensor pipes were active, averaged over the run"},
    {"interprobe_telemetry_gpu_dram_active_ratio", "Fraction of time device memory was busy, averaged over the run"},
    {"interprobe_telemetry_gpu_class", "1 for the class the run's whole window of each GPU was given, 0 for the others"},
};

// The bottleneck analysis.
constexpr HelpRow kBottleneckHelp[] = {
    {"interprobe_bottleneck_modeled_step_seconds", "Modeled decode step time per workload and batch, seconds (see interprobe_bottleneck_provenance)"},
    {"interprobe_bottleneck_tokens_per_second", "Modeled output tokens per second per workload and batch (see interprobe_bottleneck_provenance)"},
    {"interprobe_bottleneck_residual_seconds", "Observed step time the model does not explain, seconds"},
    {"interprobe_bottleneck_part_seconds",
     "Modeled time per step of each part (communication_latency, communication_bandwidth, gemm_memory_bound, "
     "gemm_compute_bound, cache_reads, launch_overhead), seconds"},
    {"interprobe_bottleneck_dominant", "1 for the part that takes the largest share of the modeled step (the bottleneck), 0 for the others"},
    {"interprobe_bottleneck_provenance",
     "1 for how the step (part=\"step\") or a part's time was obtained (measured, interpolated, extrapolated, assumed, "
     "not_measured), 0 for the others"},
};

}  // namespace

const std::map<std::string, std::string>& prometheus_help_texts() {
  static const auto help = [] {
    std::map<std::string, std::string> all;
    for (std::span<const HelpRow> rows : {std::span<const HelpRow>(kReportHelp), std::span<const HelpRow>(kMachineHelp),
                                          std::span<const HelpRow>(kCopiesHelp), std::span<const HelpRow>(kCollectivesHelp),
                                          std::span<const HelpRow>(kComputeHelp), std::span<const HelpRow>(kTelemetryHelp),
                                          std::span<const HelpRow>(kBottleneckHelp)})
      for (const auto& [name, text] : rows) all.emplace(name, text);
    return all;
  }();
  return help;
}

}  // namespace interprobe::render
