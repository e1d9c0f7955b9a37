// The metric rows of the measured sweeps: bandwidth (points, fits, P2P truth), collectives and
// compute (GEMM points, peaks, memory, launch floor), each point with the spread behind it.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "model/metric_table.hpp"
#include "model/sections.hpp"

namespace interprobe::report {

namespace {

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

}  // namespace

void bandwidth_metric_rows(const Report& r, MetricTable& t) {
  if (!r.bandwidth) return;
  const BandwidthSection& b = *r.bandwidth;
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

namespace {

// "nccl", "nccl/p2p-off/half": the defaults (variant default, dtype float) are left out.
std::string allreduce_key(const AllreduceSweep& s) {
  std::string key = label(s.backend);
  if (label(s.variant) != "default") key += "/" + label(s.variant);
  if (label(s.dtype) != "float") key += "/" + label(s.dtype);
  return key;
}

}  // namespace

void collective_metric_rows(const Report& r, MetricTable& t) {
  if (!r.collective) return;
  const CollectiveSection& c = *r.collective;
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

namespace {

MetricSpread timing_spread(const ComputeTiming& t) {
  MetricSpread s = MetricSpread::of(t.samples, t.cv_fraction);
  s.min = t.min_us;
  s.max = t.max_us;
  if (t.p95_us > 0) s.typical_low = t.min_us, s.typical_high = t.p95_us;
  return s;
}

}  // namespace

// "compute/host/bf16/gate_up_tp4/m16/tflops": engine, dtype, weight shape, M.
void compute_metric_rows(const Report& r, MetricTable& t) {
  if (!r.compute) return;
  const ComputeSection& c = *r.compute;
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

}  // namespace interprobe::report
