#include "model/metrics.hpp"

#include <algorithm>
#include <limits>

#include <set>

#include <fmt/format.h>

namespace interprobe::report {

namespace {

// A closed vocabulary as its JSON name, for paths and labels.
template <NamedEnum E>
std::string label(E value) {
  return to_string(value);
}

using Labels = std::map<std::string, std::string>;

// "series/256MiB" for a sweep point, the series alone for any other row.
std::string series_and_point(const MetricRow& row) {
  std::string point = point_segment(row);
  return point.empty() ? row.series : row.series + "/" + point;
}

// A second sweep over the same series in one report is told apart by "#2", "#3", ...
std::string with_repeat(const std::string& path, int repeat) {
  return repeat > 1 ? fmt::format("{}#{}", path, repeat) : path;
}

// Where a row goes: its family, its series, its figure and, for a sweep point, the point.
struct Key {
  std::string family;
  std::string series;
  std::string leaf;
  std::optional<std::int64_t> bytes = std::nullopt;
  std::optional<std::int64_t> tokens = std::nullopt;
};

class MetricTable {
 public:
  // The section is the label every row carries.
  MetricRow& add(Key key, double value, std::string unit, Better better, Labels labels, std::string sweep = {}) {
    MetricRow row;
    row.section = labels.at("section");
    row.family = std::move(key.family);
    row.series = std::move(key.series);
    row.leaf = std::move(key.leaf);
    row.bytes = key.bytes;
    row.tokens = key.tokens;
    row.sweep = std::move(sweep);
    // Paths are unique: a second sweep over the same path (a rerun in one report) gets "#2".
    const std::string path = series_and_point(row) + "/" + row.leaf;
    row.path = path;
    while (!seen_.insert(row.path).second) row.path = with_repeat(path, ++row.repeat);
    row.value = value;
    row.unit = std::move(unit);
    row.better = better;
    row.labels = std::move(labels);
    rows_.push_back(std::move(row));
    return rows_.back();
  }
  template <class T>
  void add_optional(Key key, const std::optional<T>& value, const std::string& unit, Better better, const Labels& labels,
                    const std::string& sweep = {}) {
    if (value) add(std::move(key), static_cast<double>(*value), unit, better, labels, sweep);
  }
  std::vector<MetricRow> take() { return std::move(rows_); }

 private:
  std::vector<MetricRow> rows_;
  std::set<std::string> seen_;
};

void add_probes(const Report& r, MetricTable& t) {
  for (const auto& p : r.probes)
    t.add({"probe", "probes/" + p.name, "duration_s"}, p.duration_s, "s", Better::lower,
          {{"section", "probes"}, {"probe", p.name}, {"status", label(p.status)}});
}

void add_system(const SystemSection& s, MetricTable& t) {
  Labels labels{{"section", "system"}};
  t.add_optional({"system", "system", "logical_cpus"}, s.logical_cpus, "count", Better::neither, labels);
  t.add_optional({"system", "system", "memory_bytes"}, s.memory_bytes, "bytes", Better::neither, labels);
}

void add_topology(const TopologySection& s, MetricTable& t) {
  for (const auto& g : s.gpus) {
    Labels labels{{"section", "topology"}, {"gpu", std::to_string(g.index)}, {"bdf", g.bdf}};
    std::string at = fmt::format("topology/gpus/{}", g.index);
    if (const PciDevice* d = s.device(g.bdf)) {
      t.add_optional({"topology_gpu_link", at + "/link", "current_gts"}, d->link.current_gts, "gts", Better::higher, labels);
      t.add_optional({"topology_gpu_link", at + "/link", "max_gts"}, d->link.max_gts, "gts", Better::higher, labels);
      t.add_optional({"topology_gpu_link", at + "/link", "current_gbps"}, d->link.current_gbps, "gbps", Better::higher, labels);
    }
    t.add_optional({"topology_gpu", at, "memory_bytes"}, g.memory_bytes, "bytes", Better::neither, labels);
  }
  for (const auto& p : s.gpu_pairs) {
    Labels labels{{"section", "topology"}, {"a", std::to_string(p.a_index)}, {"b", std::to_string(p.b_index)},
                  {"path", p.path}, {"pcie_path", label(p.pcie_path)}};
    std::string at = fmt::format("topology/gpu_pairs/{}-{}", p.a_index, p.b_index);
    t.add_optional({"topology_gpu_pair", at, "bottleneck_gbps"}, p.bottleneck_gbps, "gbps", Better::higher, labels);
    t.add_optional({"topology_gpu_pair", at, "pcie_bottleneck_gbps"}, p.pcie_bottleneck_gbps, "gbps", Better::higher, labels);
    t.add({"topology_gpu_pair", at, "nvlink_count"}, static_cast<double>(p.nvlink_count), "count", Better::higher, labels);
  }
  for (const auto& n : s.cpu.numa_nodes)
    t.add_optional({"topology_numa_node", fmt::format("topology/numa_nodes/{}", n.id), "memory_bytes"}, n.memory_bytes, "bytes", Better::neither,
                   {{"section", "topology"}, {"numa_node", std::to_string(n.id)}});
}

void add_virtualization(const VirtSection& v, MetricTable& t) {
  for (const auto& g : v.gpus)
    t.add_optional({"virtualization_gpu", "virtualization/gpus/" + g.bdf, "bar1_bytes"}, g.bar1_bytes, "bytes", Better::higher,
                   {{"section", "virtualization"}, {"bdf", g.bdf}});
}

// "host/memcpy/node0->node0/pageable/x1": everything that tells two sweeps apart.
std::string sweep_key(const BandwidthSweep& s) {
  std::string key = fmt::format("{}/{}/{}->{}", label(s.engine), label(s.kind), s.src, s.dst);
  if (s.memory_kind) key += "/" + label(*s.memory_kind);
  if (s.threads) key += fmt::format("/x{}", *s.threads);
  return key;
}

// A loop of host copies of a few bytes settled 6, 7, 8 or 9 cycles a copy (1.34-2.01 ns at
// 4.5 GHz), a 1 KiB copy through a bounce buffer 62 or 68, from one run to the next on one idle
// machine, each run steady: code and stack alignment, store-forwarding and predictor states that
// a run cannot show in its own samples. Differences this small are the copy loop's, not the path's.
constexpr double kCopyLoopCycles = 8;

// The host engine's measured cycle, when the report has one.
std::optional<double> host_cycle_ns(const BandwidthSection& b) {
  for (const auto& e : b.engines)
    if (e.engine == BandwidthEngine::host && e.cycle_ns && *e.cycle_ns > 0) return e.cycle_ns;
  return std::nullopt;
}

// A per-copy time (a size's median, or the fit's start-up time) known to +-`resolution_us`.
void set_time_resolution(MetricSpread& spread, double value_us, std::optional<double> resolution_us) {
  if (!resolution_us) return;
  spread.resolution_low = std::max(0.0, value_us - *resolution_us);
  spread.resolution_high = value_us + *resolution_us;
}

void add_bandwidth(const BandwidthSection& b, MetricTable& t) {
  std::optional<double> cycle_ns = host_cycle_ns(b);
  // The clock the host copies ran at: a second run on a host that stepped its clock moves every
  // cache-resident copy with it, and this row says why.
  if (cycle_ns)
    t.add({"bandwidth", "bandwidth/host", "cpu_clock_ghz"}, 1 / *cycle_ns, "ghz", Better::higher, {{"section", "bandwidth"}, {"engine", "host"}});
  for (const auto& s : b.sweeps) {
    std::string key = sweep_key(s);
    std::string at = "bandwidth/" + key;
    Labels labels{{"section", "bandwidth"}, {"engine", label(s.engine)}, {"kind", label(s.kind)},
                  {"src", s.src},           {"dst", s.dst}};
    if (s.memory_kind) labels["memory"] = label(*s.memory_kind);
    if (s.threads) labels["threads"] = std::to_string(*s.threads);
    std::optional<double> sweep_resolution_us;
    if (s.engine == BandwidthEngine::host && cycle_ns) sweep_resolution_us = kCopyLoopCycles * *cycle_ns / 1e3;
    for (const auto& p : s.points) {
      Labels point_labels = labels;
      point_labels["bytes"] = std::to_string(p.bytes);
      double moved = static_cast<double>(p.bytes) * static_cast<double>(s.directions);
      MetricSpread spread = MetricSpread::of(p.samples, p.cv_fraction);
      std::optional<double> resolution_us = p.median_us > 0 ? sweep_resolution_us : std::nullopt;
      auto& rate = t.add({"bandwidth", at, "gbps", p.bytes}, p.gbps, "gbps", Better::higher, point_labels, key);
      rate.spread = spread;
      if (p.max_us > 0) rate.spread->min = moved / (p.max_us * 1e3);
      if (p.min_us > 0) rate.spread->max = moved / (p.min_us * 1e3);
      // The 95% interval of the median time, as a rate: the slow end of the time is the low rate.
      if (p.median_ci_high_us && *p.median_ci_high_us > 0) rate.spread->interval_low = moved / (*p.median_ci_high_us * 1e3);
      if (p.median_ci_low_us && *p.median_ci_low_us > 0) rate.spread->interval_high = moved / (*p.median_ci_low_us * 1e3);
      if (p.min_us > 0 && p.p95_us > 0) {
        rate.spread->typical_low = moved / (p.p95_us * 1e3);
        rate.spread->typical_high = moved / (p.min_us * 1e3);
      }
      auto [fastest_pass, slowest_pass] = std::minmax_element(p.visit_medians_us.begin(), p.visit_medians_us.end());
      bool passes = p.visit_medians_us.size() >= 2 && *fastest_pass > 0;
      if (passes) {
        rate.spread->passes_low = moved / (*slowest_pass * 1e3);
        rate.spread->passes_high = moved / (*fastest_pass * 1e3);
      }
      if (resolution_us) {
        rate.spread->resolution_low = moved / ((p.median_us + *resolution_us) * 1e3);
        rate.spread->resolution_high = p.median_us > *resolution_us ? moved / ((p.median_us - *resolution_us) * 1e3)
                                                                    : std::numeric_limits<double>::infinity();
      }
      // `rate` may move when the next row is added.
      auto& time = t.add({"bandwidth", at, "time_us", p.bytes}, p.median_us, "us", Better::lower, point_labels, key);
      time.spread = spread;
      time.spread->min = p.min_us;
      time.spread->max = p.max_us;
      time.spread->interval_low = p.median_ci_low_us;
      time.spread->interval_high = p.median_ci_high_us;
      if (p.p95_us > 0) time.spread->typical_low = p.min_us, time.spread->typical_high = p.p95_us;
      if (passes) time.spread->passes_low = *fastest_pass, time.spread->passes_high = *slowest_pass;
      set_time_resolution(*time.spread, p.median_us, resolution_us);
    }
    if (s.fit) {
      // How far the sweep's own medians scatter around the fit stands for the fit's noise.
      MetricSpread scatter = MetricSpread::of(s.fit->points_used, s.fit->residual_fraction);
      t.add({"bandwidth_fit", at + "/fit", "peak_gbps"}, s.fit->peak_gbps, "gbps", Better::higher, labels, key).spread = scatter;
      auto& t0 = t.add({"bandwidth_fit", at + "/fit", "t0_us"}, s.fit->t0_us, "us", Better::lower, labels, key);
      t0.spread = scatter;
      set_time_resolution(*t0.spread, s.fit->t0_us, sweep_resolution_us);  // a per-copy time, as the sizes
    }
    // Not measured: the slowest link on the path, for relative thresholds (check's `of`); its
    // provenance label says so to exporters.
    Labels expected_labels = labels;
    expected_labels["provenance"] = label(Provenance::not_measured);
    t.add_optional({"bandwidth", at, "expected_gbps"}, s.expected_gbps, "gbps", Better::neither, expected_labels, key);
  }
  for (const auto& p : b.p2p_pairs) {
    std::string at = fmt::format("bandwidth/p2p_truth/{}->{}", p.src, p.dst);
    Labels labels{{"section", "bandwidth"}, {"src", p.src}, {"dst", p.dst}, {"truth", label(p.truth)}};
    t.add_optional({"p2p", at, "p2p_gbps"}, p.p2p_gbps, "gbps", Better::higher, labels);
    t.add_optional({"p2p", at, "staged_gbps"}, p.staged_gbps, "gbps", Better::higher, labels);
    t.add_optional({"p2p", at, "p2p_latency_us"}, p.p2p_latency_us, "us", Better::lower, labels);
    t.add_optional({"p2p", at, "staged_latency_us"}, p.staged_latency_us, "us", Better::lower, labels);
  }
}

// "nccl", "nccl/p2p-off/half": the defaults (variant default, dtype float) are left out.
std::string allreduce_key(const AllreduceSweep& s) {
  std::string key = label(s.backend);
  if (label(s.variant) != "default") key += "/" + label(s.variant);
  if (label(s.dtype) != "float") key += "/" + label(s.dtype);
  return key;
}

void add_collective(const CollectiveSection& c, MetricTable& t) {
  for (const auto& s : c.allreduce) {
    std::string at = "collective/" + allreduce_key(s);
    Labels labels{{"section", "collective"}, {"backend", label(s.backend)}, {"variant", label(s.variant)},
                  {"dtype", label(s.dtype)},  {"ranks", std::to_string(s.ranks)}};
    for (const auto& p : s.points) {
      Labels point_labels = labels;
      point_labels["bytes"] = std::to_string(p.bytes);
      point_labels["placement"] = p.in_place ? "in_place" : "out_of_place";
      std::string series = p.in_place ? at + "/in_place" : at;
      auto& time = t.add({"allreduce", series, "time_us", p.bytes}, p.time_us, "us", Better::lower, point_labels);
      time.spread = MetricSpread::of(p.samples, std::nullopt);
      time.spread->min = p.min_us;
      time.spread->max = p.max_us;
      t.add({"allreduce", series, "busbw_gbps", p.bytes}, p.busbw_gbps, "gbps", Better::higher, point_labels);
      t.add({"allreduce", series, "algbw_gbps", p.bytes}, p.algbw_gbps, "gbps", Better::higher, point_labels);
      t.add_optional({"allreduce", series, "rank_mean_time_us", p.bytes}, p.rank_mean_time_us, "us", Better::lower, point_labels);
      t.add_optional({"allreduce", series, "rank_mean_busbw_gbps", p.bytes}, p.rank_mean_busbw_gbps, "gbps", Better::higher, point_labels);
    }
    const auto& summary = s.summary;
    t.add_optional({"allreduce", at, "latency_us"}, summary.latency_us, "us", Better::lower, labels);
    t.add_optional({"allreduce", at, "peak_busbw_gbps"}, summary.peak_busbw_gbps, "gbps", Better::higher, labels);
    t.add_optional({"allreduce", at, "plateau_busbw_gbps"}, summary.plateau_busbw_gbps, "gbps", Better::higher, labels);
    t.add_optional({"allreduce", at, "half_plateau_bytes"}, summary.half_plateau_bytes, "bytes", Better::lower, labels);
  }
}

MetricSpread timing_spread(const ComputeTiming& t) {
  MetricSpread s = MetricSpread::of(t.samples, t.cv_fraction);
  s.min = t.min_us;
  s.max = t.max_us;
  if (t.p95_us > 0) s.typical_low = t.min_us, s.typical_high = t.p95_us;
  return s;
}

// "compute/host/bf16/gate_up_tp4/m16/tflops": engine, dtype, weight shape, M.
void add_compute(const ComputeSection& c, MetricTable& t) {
  for (const auto& e : c.engines) {
    std::string at = "compute/" + label(e.engine);
    Labels labels{{"section", "compute"}, {"engine", label(e.engine)}};
    for (const auto& m : e.memory) {
      Labels l = labels;
      l["memory"] = m.name;
      auto& row = t.add({"compute_memory", fmt::format("{}/memory/{}", at, m.name), "gbps"}, m.gbps, "gbps", Better::higher, l);
      row.spread = MetricSpread::of(m.timing.samples, m.timing.cv_fraction);
    }
    t.add_optional({"compute", at, "launch_floor_us"}, e.launch_floor_us, "us", Better::lower, labels);
    t.add_optional({"compute", at, "launch_floor_graph_us"}, e.launch_floor_graph_us, "us", Better::lower, labels);
    for (const auto& p : e.peaks) {
      Labels l = labels;
      l["dtype"] = label(p.dtype);
      auto& row = t.add({"compute_peak", fmt::format("{}/peak/{}", at, label(p.dtype)), "tflops"}, p.measured_tflops, "tflops", Better::higher, l);
      row.spread = MetricSpread::of(p.timing.samples, p.timing.cv_fraction);
    }
    for (const auto& p : e.points) {
      Labels l = labels;
      l["dtype"] = label(p.dtype);
      l["shape"] = p.shape;
      l["m"] = std::to_string(p.m);
      l["n"] = std::to_string(p.n);
      l["k"] = std::to_string(p.k);
      if (p.bound) l["bound"] = label(*p.bound);
      std::string series = fmt::format("{}/{}/{}", at, label(p.dtype), p.shape);
      t.add({"compute_gemm", series, "time_us", std::nullopt, p.m}, p.timing.median_us, "us", Better::lower, l).spread = timing_spread(p.timing);
      auto& rate = t.add({"compute_gemm", series, "tflops", std::nullopt, p.m}, p.tflops, "tflops", Better::higher, l);
      rate.spread = MetricSpread::of(p.timing.samples, p.timing.cv_fraction);
      t.add_optional({"compute_gemm", series, "peak_fraction", std::nullopt, p.m}, p.peak_fraction, "fraction", Better::higher, l);
      t.add_optional({"compute_gemm", series, "memory_bandwidth_fraction", std::nullopt, p.m}, p.memory_bandwidth_fraction, "fraction", Better::higher, l);
    }
  }
}

// "bottlenecks/meta-llama_Llama-3.1-70B-Instruct/tp8/b64/tokens_per_s": modeled, not measured;
// the labels carry how each number was obtained.
void add_bottlenecks(const BottleneckSection& b, MetricTable& t) {
  for (const auto& w : b.workloads) {
    std::string model = w.model;
    std::replace(model.begin(), model.end(), '/', '_');
    for (const auto& e : w.batches) {
      std::string at = fmt::format("bottlenecks/{}/tp{}/b{}", model, w.tp, e.batch);
      Labels l{{"section", "bottlenecks"}, {"model", w.model}, {"tp", std::to_string(w.tp)},
               {"batch", std::to_string(e.batch)}, {"provenance", label(e.provenance)}};
      if (e.bottleneck) l["bottleneck"] = label(*e.bottleneck);
      t.add({"bottleneck", at, "modeled_step_us"}, e.modeled_step_us, "us", Better::lower, l);
      t.add({"bottleneck", at, "tokens_per_s"}, e.tokens_per_s, "tokens_per_s", Better::higher, l);
      for (const auto& c : e.categories) {
        Labels cl = l;
        cl["provenance"] = label(c.provenance);
        t.add_optional({"bottleneck", at, label(c.category) + "_us"}, c.time_us, "us", Better::lower, cl);
      }
      t.add_optional({"bottleneck", at, "residual_us"}, e.residual_us, "us", Better::lower, l);
    }
  }
}

// "telemetry/gpu0/utilization_fraction": the whole run's averages per GPU (windows stay in the
// report); the class is a label, so an exporter can count GPUs per class.
void add_telemetry(const TelemetrySection& s, MetricTable& t) {
  for (const auto& g : s.gpus) {
    const auto& w = g.overall;
    Labels l{{"section", "telemetry"}, {"gpu", std::to_string(g.index)}, {"class", label(w.classification)}, {"rule", w.rule}};
    if (g.bdf) l["bdf"] = *g.bdf;
    std::string at = fmt::format("telemetry/gpu{}", g.index);
    const auto& a = w.averages;
    t.add_optional({"telemetry_gpu", at, "utilization_fraction"}, a.utilization_fraction, "fraction", Better::neither, l);
    t.add_optional({"telemetry_gpu", at, "power_w"}, a.power_w, "w", Better::neither, l);
    t.add_optional({"telemetry_gpu", at, "power_limit_fraction"}, a.power_limit_fraction, "fraction", Better::neither, l);
    t.add_optional({"telemetry_gpu", at, "sm_clock_fraction"}, a.sm_clock_fraction, "fraction", Better::higher, l);
    t.add_optional({"telemetry_gpu", at, "power_cap_time_fraction"}, a.power_cap_time_fraction, "fraction", Better::lower, l);
    t.add_optional({"telemetry_gpu", at, "thermal_time_fraction"}, a.thermal_time_fraction, "fraction", Better::lower, l);
    t.add_optional({"telemetry_gpu", at, "pcie_gbps"}, a.pcie_gbps, "gbps", Better::neither, l);
    t.add_optional({"telemetry_gpu", at, "nvlink_gbps"}, a.nvlink_gbps, "gbps", Better::neither, l);
    t.add_optional({"telemetry_gpu", at, "sm_active_fraction"}, a.sm_active_fraction, "fraction", Better::neither, l);
    t.add_optional({"telemetry_gpu", at, "tensor_active_fraction"}, a.tensor_active_fraction, "fraction", Better::neither, l);
    t.add_optional({"telemetry_gpu", at, "dram_active_fraction"}, a.dram_active_fraction, "fraction", Better::neither, l);
  }
}

}  // namespace

std::string size_segment(std::int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::int64_t value = bytes;
  std::size_t unit = 0;
  while (value >= 1024 && value % 1024 == 0 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", value, kUnits[unit]);
}

std::string point_segment(const MetricRow& row) {
  if (row.bytes) return size_segment(*row.bytes);
  if (row.tokens) return fmt::format("m{}", *row.tokens);
  return {};
}

std::optional<std::string> series_path(const MetricRow& row) {
  if (!row.bytes && !row.tokens) return std::nullopt;
  return with_repeat(row.series + "/*/" + row.leaf, row.repeat);
}

std::string point_path(const MetricRow& row) { return with_repeat(series_and_point(row), row.repeat); }

std::span<const EnumName<Better>> names(Better) {
  static constexpr EnumName<Better> table[] = {{Better::higher, "higher"}, {Better::lower, "lower"}, {Better::neither, "neither"}};
  return table;
}

std::vector<MetricRow> metrics_of(const Report& r) {
  MetricTable t;
  add_probes(r, t);
  if (r.system) add_system(*r.system, t);
  if (r.topology) add_topology(*r.topology, t);
  if (r.virtualization) add_virtualization(*r.virtualization, t);
  if (r.bandwidth) add_bandwidth(*r.bandwidth, t);
  if (r.collective) add_collective(*r.collective, t);
  if (r.compute) add_compute(*r.compute, t);
  if (r.telemetry) add_telemetry(*r.telemetry, t);
  if (r.bottlenecks) add_bottlenecks(*r.bottlenecks, t);
  return t.take();
}

}  // namespace interprobe::report
