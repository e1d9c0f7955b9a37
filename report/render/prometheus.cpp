#include "report/render/prometheus.hpp"

#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/text.hpp"
#include "interprobe/build_config.hpp"
#include "report/render/document.hpp"

#if INTERPROBE_HAVE_PROMETHEUS
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>
#endif

namespace interprobe::render {

namespace {

// The report's units as Prometheus name suffixes: its base-unit words where the report abbreviates
// (s, w, fraction); the rest as the report writes them (gbps = 1e9 bytes/s, us, bytes, gts, tflops).
std::string unit_suffix(const std::string& unit) {
  if (unit == "s") return "seconds";
  if (unit == "w") return "watts";
  if (unit == "fraction") return "ratio";
  return unit;
}

// The last path segment with its unit in Prometheus words: "duration_s" -> "duration_seconds",
// "gbps" -> "gbps"; a leaf without its unit ("logical_cpus") stays as it is.
std::string leaf_with_unit(const std::string& leaf, const std::string& unit) {
  if (leaf == unit) return unit_suffix(unit);
  std::string tail = "_" + unit;
  if (leaf.size() > tail.size() && leaf.compare(leaf.size() - tail.size(), tail.size(), tail) == 0)
    return leaf.substr(0, leaf.size() - tail.size()) + "_" + unit_suffix(unit);
  return leaf;
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

// "bandwidth/host/memcpy/node0->node0/x1/256MiB/gbps#2" -> its segments without the "#2" that
// tells a second sweep over the same path apart (the repeat label carries that).
std::vector<std::string> path_segments(const std::string& path) {
  std::string plain = path.substr(0, path.find('#'));
  return split(plain, '/');
}

// What a section's rows are called after "interprobe_": the section and the constant words of the
// path that tell its kinds of rows apart (the variable segments are labels).
std::string family_stem(const std::vector<std::string>& segs) {
  const std::string& section = segs.front();
  auto at = [&](std::size_t i) -> std::string { return i < segs.size() ? segs[i] : std::string(); };
  std::size_t n = segs.size();
  if (section == "probes") return "probe";
  if (section == "topology") {
    if (at(1) == "gpus") return at(3) == "link" ? "topology_gpu_link" : "topology_gpu";
    if (at(1) == "gpu_pairs") return "topology_gpu_pair";
    if (at(1) == "numa_nodes") return "topology_numa_node";
  }
  if (section == "virtualization" && at(1) == "gpus") return "virtualization_gpu";
  if (section == "bandwidth" && n >= 2 && segs[n - 2] == "fit") return "bandwidth_fit";
  if (section == "collective") return "allreduce";  // the only collective measured
  if (section == "compute") {
    if (at(2) == "memory" || at(2) == "peak") return "compute_" + at(2);
    return n == 3 ? "compute" : "compute_gemm";  // compute/<engine>/launch_floor_us; the GEMM points
  }
  if (section == "telemetry") return "telemetry_gpu";
  if (section == "bottlenecks") return "bottleneck";
  return section;  // system, bandwidth, and sections added later: section + leaf
}

// A bandwidth sweep's own path ("host/memcpy/node0->node0/x1"): the row's path without the
// section, the size and the leaf. Empty for rows that are not a sweep's (p2p_truth).
std::string sweep_path(const std::vector<std::string>& segs, const report::MetricRow& row) {
  if (segs.front() != "bandwidth" || segs.size() < 3 || segs[1] == "p2p_truth") return {};
  std::size_t n = segs.size();
  std::size_t drop = (row.labels.count("bytes") || segs[n - 2] == "fit") ? 2 : 1;
  if (n < drop + 2) return {};
  std::string out;
  for (std::size_t i = 1; i + drop < n; ++i) out += (out.empty() ? "" : "/") + segs[i];
  return out;
}

const std::map<std::string, std::string>& help_texts() {
  static const std::map<std::string, std::string> help{
      {"interprobe_info", "Always 1: the interprobe version, report schema, hypervisor and machine type, whether the report "
                          "was measured live (not replayed from --root), whether simulated vendor libraries were loaded and whether "
                          "parts of it were constructed (a fixture or example) rather than measured"},
      {"interprobe_probe_ok", "1 when the probe finished (status ok), 0 when it was unsupported, skipped or failed"},
      {"interprobe_finding", "1 for each finding of the report (id and severity as in the report)"},
      {"interprobe_probe_duration_seconds", "Wall time each probe took, seconds"},
      {"interprobe_system_logical_cpus", "Logical CPUs the kernel sees"},
      {"interprobe_system_memory_bytes", "Memory the kernel reports, bytes"},
      {"interprobe_topology_gpu_link_current_gts", "PCIe link speed each GPU trained to, GT/s per lane (read, not timed)"},
      {"interprobe_topology_gpu_link_max_gts", "Highest PCIe link speed each GPU supports, GT/s per lane"},
      {"interprobe_topology_gpu_link_current_gbps", "Each GPU's PCIe link rate at its current speed and width, 1e9 bytes/s"},
      {"interprobe_topology_gpu_memory_bytes", "Memory of each GPU, bytes"},
      {"interprobe_topology_gpu_pair_bottleneck_gbps", "Slowest link between two GPUs by its link rate, 1e9 bytes/s (read, not timed)"},
      {"interprobe_topology_gpu_pair_pcie_bottleneck_gbps", "Slowest PCIe link between two GPUs by its link rate, 1e9 bytes/s"},
      {"interprobe_topology_gpu_pair_nvlink_count", "NVLinks between two GPUs"},
      {"interprobe_topology_numa_node_memory_bytes", "Memory of each NUMA node, bytes"},
      {"interprobe_virtualization_gpu_bar1_bytes", "BAR1 size of each GPU as the guest sees it, bytes"},
      {"interprobe_bandwidth_gbps", "Measured copy bandwidth (median) per path and size, 1e9 bytes/s"},
      {"interprobe_bandwidth_time_us", "Median time of one copy per path and size, microseconds"},
      {"interprobe_bandwidth_fit_peak_gbps", "Peak bandwidth of the latency-bandwidth fit over a sweep, 1e9 bytes/s"},
      {"interprobe_bandwidth_fit_t0_us", "Fixed cost per copy of the latency-bandwidth fit over a sweep, microseconds"},
      {"interprobe_bandwidth_expected_gbps",
       "Expected bandwidth of a sweep's path: its slowest link's rate, not measured (provenance=\"not_measured\"), 1e9 bytes/s"},
      {"interprobe_bandwidth_p2p_gbps", "GPU-to-GPU copy bandwidth with peer access, 1e9 bytes/s"},
      {"interprobe_bandwidth_staged_gbps", "GPU-to-GPU copy bandwidth staged through host memory, 1e9 bytes/s"},
      {"interprobe_bandwidth_p2p_latency_us", "GPU-to-GPU small-copy time with peer access, microseconds"},
      {"interprobe_bandwidth_staged_latency_us", "GPU-to-GPU small-copy time staged through host memory, microseconds"},
      {"interprobe_allreduce_time_us", "All-reduce time per size (slowest rank), microseconds"},
      {"interprobe_allreduce_busbw_gbps", "All-reduce bus bandwidth per size, 1e9 bytes/s"},
      {"interprobe_allreduce_algbw_gbps", "All-reduce algorithm bandwidth per size, 1e9 bytes/s"},
      {"interprobe_allreduce_rank_mean_time_us", "All-reduce time per size averaged over the ranks, microseconds"},
      {"interprobe_allreduce_rank_mean_busbw_gbps", "All-reduce bus bandwidth per size from the ranks' mean time, 1e9 bytes/s"},
      {"interprobe_allreduce_latency_us", "All-reduce time at the smallest size, microseconds"},
      {"interprobe_allreduce_peak_busbw_gbps", "Highest all-reduce bus bandwidth of the sweep, 1e9 bytes/s"},
      {"interprobe_allreduce_plateau_busbw_gbps", "All-reduce bus bandwidth at the large sizes, 1e9 bytes/s"},
      {"interprobe_allreduce_half_plateau_bytes", "Smallest all-reduce size reaching half the plateau bandwidth, bytes"},
      {"interprobe_compute_memory_gbps", "Device memory bandwidth measured by the compute engine, 1e9 bytes/s"},
      {"interprobe_compute_launch_floor_us", "Shortest time of an empty kernel launch (host: call), microseconds"},
      {"interprobe_compute_peak_tflops", "Measured GEMM peak per data type, 1e12 floating-point operations/s"},
      {"interprobe_compute_gemm_time_us", "Median GEMM time per shape and M, microseconds"},
      {"interprobe_compute_gemm_tflops", "GEMM throughput per shape and M, 1e12 floating-point operations/s"},
      {"interprobe_compute_gemm_peak_ratio", "GEMM throughput as a fraction of the measured peak"},
      {"interprobe_compute_gemm_memory_bandwidth_ratio", "GEMM operand traffic as a fraction of the measured memory bandwidth"},
      {"interprobe_telemetry_gpu_utilization_ratio", "NVML utilization averaged over the run (any kernel running counts)"},
      {"interprobe_telemetry_gpu_power_watts", "Power draw averaged over the run, watts"},
      {"interprobe_telemetry_gpu_power_limit_ratio", "Power draw as a fraction of the power limit, averaged over the run"},
      {"interprobe_telemetry_gpu_sm_clock_ratio", "SM clock as a fraction of its maximum, averaged over the run"},
      {"interprobe_telemetry_gpu_power_cap_time_ratio", "Fraction of the run the power cap throttled the clocks"},
      {"interprobe_telemetry_gpu_thermal_time_ratio", "Fraction of the run thermal limits throttled the clocks"},
      {"interprobe_telemetry_gpu_pcie_gbps", "PCIe traffic averaged over the run, 1e9 bytes/s"},
      {"interprobe_telemetry_gpu_nvlink_gbps", "NVLink traffic averaged over the run, 1e9 bytes/s"},
      {"interprobe_telemetry_gpu_sm_active_ratio", "Fraction of time SMs had a warp resident, averaged over the run"},
      {"interprobe_telemetry_gpu_tensor_active_ratio", "Fraction of time tensor pipes were active, averaged over the run"},
      {"interprobe_telemetry_gpu_dram_active_ratio", "Fraction of time device memory was busy, averaged over the run"},
      {"interprobe_bottleneck_modeled_step_us", "Modeled decode step time per workload and batch, microseconds (see provenance)"},
      {"interprobe_bottleneck_tokens_per_s", "Modeled output tokens per second per workload and batch (see provenance)"},
      {"interprobe_bottleneck_residual_us", "Observed step time the model does not explain, microseconds"},
      {"interprobe_bottleneck_communication_latency_us", "Modeled time of the all-reduces' fixed cost per step, microseconds"},
      {"interprobe_bottleneck_communication_bandwidth_us", "Modeled time of the all-reduces' transfer per step, microseconds"},
      {"interprobe_bottleneck_gemm_memory_bound_us", "Modeled time of memory-bound GEMMs per step, microseconds"},
      {"interprobe_bottleneck_gemm_compute_bound_us", "Modeled time of compute-bound GEMMs per step, microseconds"},
      {"interprobe_bottleneck_cache_reads_us", "Modeled time of KV-cache reads per step, microseconds"},
      {"interprobe_bottleneck_launch_overhead_us", "Modeled kernel launch overhead per step, microseconds"},
  };
  return help;
}

std::string help_of(const std::string& family, const std::string& unit) {
  const auto& help = help_texts();
  if (auto it = help.find(family); it != help.end()) return it->second;
  return fmt::format("interprobe report metric, unit {}", unit);  // a row kind newer than this table
}

// The families being built: each name once, in the order it first came; each series once.
class FamilyTable {
 public:
  void add(const std::string& name, const std::string& help, std::map<std::string, std::string> labels, double value) {
    if (!std::isfinite(value)) return;
    auto [it, inserted] = index_.try_emplace(name, families_.size());
    if (inserted) families_.push_back({name, help, {}});
    std::string key = series_key(name, labels);
    for (int n = 2; !series_.insert(key).second; ++n) {
      labels["repeat"] = std::to_string(n);
      key = series_key(name, labels);
    }
    families_[it->second].samples.push_back({std::move(labels), value});
  }
  std::vector<PrometheusFamily> take() { return std::move(families_); }

 private:
  static std::string series_key(const std::string& name, const std::map<std::string, std::string>& labels) {
    std::string key = name;
    for (const auto& [k, v] : labels) key += fmt::format("\x1f{}\x1e{}", k, v);
    return key;
  }
  std::vector<PrometheusFamily> families_;
  std::map<std::string, std::size_t> index_;
  std::set<std::string> series_;
};


void add_info(const report::Report& r, FamilyTable& t) {
  std::map<std::string, std::string> labels{{"version", prometheus_label_value(r.tool.version)},
                                            {"schema_version", prometheus_label_value(r.schema_version)},
                                            {"live", r.host.live ? "true" : "false"}};
  bool simulated = false;
  for (const auto& [name, lib] : r.tool.libraries) simulated = simulated || lib.simulated.has_value();
  labels["simulated"] = simulated ? "true" : "false";
  labels["constructed"] = constructed_parts(r).empty() ? "false" : "true";
  if (const auto& v = r.virtualization) {
    labels["hypervisor"] = prometheus_label_value(v->hypervisor);
    labels["container"] = prometheus_label_value(v->container);
    if (v->machine_type) labels["machine_type"] = prometheus_label_value(*v->machine_type);
    if (v->product) labels["product"] = prometheus_label_value(*v->product);
  }
  t.add("interprobe_info", help_of("interprobe_info", ""), std::move(labels), 1);
}

void add_rows(const std::vector<report::MetricRow>& rows, FamilyTable& t) {
  for (const auto& row : rows) {
    std::map<std::string, std::string> labels;
    for (const auto& [key, value] : row.labels)
      if (key != "section") labels[prometheus_label_name(key)] = prometheus_label_value(value);
    auto segs = path_segments(row.path);
    if (std::string sweep = sweep_path(segs, row); !sweep.empty()) labels["path"] = prometheus_label_value(sweep);
    std::string name = prometheus_family_name(row);
    t.add(name, help_of(name, row.unit), std::move(labels), row.value);
  }
}

}  // namespace

std::string prometheus_family_name(const report::MetricRow& row) {
  auto segs = path_segments(row.path);
  if (segs.empty() || segs.front().empty()) return "interprobe_unnamed";
  std::string name = fmt::format("interprobe_{}_{}", family_stem(segs), leaf_with_unit(segs.back(), row.unit));
  return name_chars(name, /*colon_allowed=*/true);  // starts with "interprobe_": never a digit
}

std::string prometheus_label_name(std::string_view key) {
  if (key == "bytes") return "size_bytes";
  std::string name = name_chars(std::string(key), /*colon_allowed=*/false);
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) name.insert(0, "_");
  while (name.rfind("__", 0) == 0) name.erase(0, 1);  // "__" starts names Prometheus reserves
  return name;
}

std::string prometheus_label_value(std::string_view raw) { return printable(raw, {.keep_newlines = true}); }

std::vector<PrometheusFamily> prometheus_families(const report::Report& r) {
  FamilyTable t;
  add_info(r, t);
  auto rows = report::metrics_of(r);
  for (const auto& row : rows) {
    auto probe = row.labels.find("probe");
    auto status = row.labels.find("status");
    if (row.path.rfind("probes/", 0) != 0 || probe == row.labels.end() || status == row.labels.end()) continue;
    t.add("interprobe_probe_ok", help_of("interprobe_probe_ok", ""), {{"probe", prometheus_label_value(probe->second)}},
          status->second == "ok" ? 1 : 0);
  }
  add_rows(rows, t);
  for (const auto& f : r.findings)
    t.add("interprobe_finding", help_of("interprobe_finding", ""),
          {{"id", prometheus_label_value(f.id)}, {"severity", std::string(report::to_string(f.severity))}}, 1);
  return t.take();
}

bool prometheus_available() { return INTERPROBE_HAVE_PROMETHEUS != 0; }

void require_prometheus() {
  if (prometheus_available()) return;
  throw InputError(
      "--format prometheus: this interprobe was built without prometheus-cpp; install it (apt-get install "
      "prometheus-cpp-dev) and rebuild, or save the report with -o and render it with a build that has it");
}

std::string render_prometheus(const report::Report& r) {
#if INTERPROBE_HAVE_PROMETHEUS
  std::vector<prometheus::MetricFamily> families;
  for (auto& f : prometheus_families(r)) {
    prometheus::MetricFamily family{f.name, f.help, prometheus::MetricType::Gauge, {}};
    for (auto& s : f.samples) {
      prometheus::ClientMetric metric;
      for (auto& [name, value] : s.labels) metric.label.push_back({name, value});
      metric.gauge.value = s.value;
      family.metric.push_back(std::move(metric));  // timestamp_ms stays 0: no timestamp is written
    }
    families.push_back(std::move(family));
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
#else
  (void)r;
  require_prometheus();  // throws
  return {};
#endif
}

}  // namespace interprobe::render
