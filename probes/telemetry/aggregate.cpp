// Window averages from raw samples: cumulative counters become rates over the window (first to
// last sample that has them), instantaneous values are averaged.
#include <algorithm>
#include <cmath>

#include "probes/telemetry/classify.hpp"

namespace interprobe::telemetry {

namespace {

template <class Get>
std::optional<double> mean(const std::vector<const TraceSample*>& samples, Get get) {
  double sum = 0;
  int n = 0;
  for (const auto* s : samples)
    if (auto v = get(*s)) sum += static_cast<double>(*v), ++n;
  if (n == 0) return std::nullopt;
  return sum / n;
}

// Growth per second of a cumulative counter; null with fewer than two readings, no time between
// them, or a counter that went backwards (driver reload, wrap).
template <class Get>
std::optional<double> rate(const std::vector<const TraceSample*>& samples, Get get) {
  const TraceSample *first = nullptr, *last = nullptr;
  for (const auto* s : samples) {
    if (!get(*s)) continue;
    if (!first) first = s;
    last = s;
  }
  if (!first || !(last->t_s > first->t_s)) return std::nullopt;
  double delta = static_cast<double>(*get(*last)) - static_cast<double>(*get(*first));
  if (delta < 0) return std::nullopt;
  return delta / (last->t_s - first->t_s);
}

std::optional<double> share_with_bits(const std::vector<const TraceSample*>& samples, std::int64_t mask) {
  int with = 0, n = 0;
  for (const auto* s : samples)
    if (s->clock_event_reasons) ++n, with += (*s->clock_event_reasons & mask) != 0;
  if (n == 0) return std::nullopt;
  return static_cast<double>(with) / n;
}

std::optional<double> ratio(std::optional<double> value, std::optional<double> of) {
  if (!value || !of || !(*of > 0)) return std::nullopt;
  return *value / *of;
}

std::optional<double> larger(std::optional<double> a, std::optional<double> b) {
  if (a && b) return std::max(*a, *b);
  return a ? a : b;
}

}  // namespace

report::TelemetryAverages aggregate(const TraceGpu& gpu, const std::vector<const TraceSample*>& samples) {
  report::TelemetryAverages a;
  a.utilization_fraction = mean(samples, [](const TraceSample& s) { return s.utilization_fraction; });
  // The energy counter integrates power between samples; the instantaneous reading can miss bursts.
  auto energy_w = rate(samples, [](const TraceSample& s) { return s.energy_mj; });
  a.power_w = energy_w ? std::optional<double>(*energy_w / 1000) : mean(samples, [](const TraceSample& s) { return s.power_w; });
  a.power_limit_fraction = ratio(a.power_w, gpu.power_limit_w);
  auto as_double = [](std::optional<std::int64_t> v) { return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt; };
  a.sm_clock_fraction = ratio(mean(samples, [](const TraceSample& s) { return s.sm_clock_mhz; }), as_double(gpu.sm_clock_max_mhz));
  a.memory_clock_fraction =
      ratio(mean(samples, [](const TraceSample& s) { return s.memory_clock_mhz; }), as_double(gpu.memory_clock_max_mhz));
  a.power_cap_sample_fraction = share_with_bits(samples, kReasonSwPowerCap);
  a.thermal_sample_fraction = share_with_bits(samples, kReasonThermalMask);
  // Violation counters are nanoseconds of throttling per second of wall time.
  if (auto r = rate(samples, [](const TraceSample& s) { return s.power_cap_violation_ns; })) a.power_cap_time_fraction = std::min(1.0, *r / 1e9);
  if (auto r = rate(samples, [](const TraceSample& s) { return s.thermal_violation_ns; })) a.thermal_time_fraction = std::min(1.0, *r / 1e9);
  auto pcie_tx = rate(samples, [](const TraceSample& s) { return s.pcie_tx_bytes; });
  auto pcie_rx = rate(samples, [](const TraceSample& s) { return s.pcie_rx_bytes; });
  if (auto b = larger(pcie_tx, pcie_rx)) a.pcie_gbps = *b / 1e9;
  a.pcie_capacity_fraction = ratio(a.pcie_gbps, gpu.pcie_capacity_gbps);
  auto nv_tx = rate(samples, [](const TraceSample& s) { return s.nvlink_tx_bytes; });
  auto nv_rx = rate(samples, [](const TraceSample& s) { return s.nvlink_rx_bytes; });
  if (auto b = larger(nv_tx, nv_rx)) a.nvlink_gbps = *b / 1e9;
  a.nvlink_capacity_fraction = ratio(a.nvlink_gbps, gpu.nvlink_capacity_gbps);
  a.sm_active_fraction = mean(samples, [](const TraceSample& s) { return s.sm_active_fraction; });
  a.sm_occupancy_fraction = mean(samples, [](const TraceSample& s) { return s.sm_occupancy_fraction; });
  a.tensor_active_fraction = mean(samples, [](const TraceSample& s) { return s.tensor_active_fraction; });
  a.dram_active_fraction = mean(samples, [](const TraceSample& s) { return s.dram_active_fraction; });
  return a;
}

namespace {

report::TelemetryWindow window_of(const TraceGpu& gpu, const std::vector<const TraceSample*>& samples, double interval_s) {
  double span = samples.empty() ? 0 : samples.back()->t_s - samples.front()->t_s + interval_s;
  report::TelemetryWindow w = classify_window(aggregate(gpu, samples), span, gpu.gpm_reason);
  w.samples = static_cast<std::int64_t>(samples.size());
  if (!samples.empty()) w.start_s = samples.front()->t_s, w.end_s = samples.back()->t_s + interval_s;
  return w;
}

}  // namespace

report::TelemetrySection classify_trace(const Trace& trace, const ClassifyOptions& options) {
  report::TelemetrySection out;
  out.interval_s = trace.interval_s;
  out.window_s = options.window_s;
  out.samples = static_cast<std::int64_t>(trace.samples.size());
  for (const auto& s : trace.samples) out.duration_s = std::max(out.duration_s, s.t_s + trace.interval_s);
  for (const auto& gpu : trace.gpus) {
    std::vector<const TraceSample*> mine;
    for (const auto& s : trace.samples)
      if (s.gpu == gpu.index) mine.push_back(&s);
    std::stable_sort(mine.begin(), mine.end(), [](const TraceSample* x, const TraceSample* y) { return x->t_s < y->t_s; });
    report::TelemetryGpu g;
    g.index = gpu.index;
    g.bdf = gpu.bdf;
    g.name = gpu.name;
    g.power_limit_w = gpu.power_limit_w;
    g.sm_clock_max_mhz = gpu.sm_clock_max_mhz;
    g.pcie_capacity_gbps = gpu.pcie_capacity_gbps;
    g.nvlink_capacity_gbps = gpu.nvlink_capacity_gbps;
    g.gpm_reason = gpu.gpm_reason;
    g.unsupported = gpu.unsupported;
    g.overall = window_of(gpu, mine, trace.interval_s);
    // Consecutive windows by sample time; a last window shorter than half a window joins the one before.
    std::size_t begin = 0;
    while (begin < mine.size()) {
      double start = mine[begin]->t_s;
      std::size_t end = begin;
      while (end < mine.size() && mine[end]->t_s < start + options.window_s) ++end;
      if (end < mine.size() && mine.back()->t_s + trace.interval_s - mine[end]->t_s < options.window_s / 2) end = mine.size();
      g.windows.push_back(window_of(gpu, {mine.begin() + static_cast<std::ptrdiff_t>(begin), mine.begin() + static_cast<std::ptrdiff_t>(end)},
                                    trace.interval_s));
      begin = end;
    }
    out.gpus.push_back(std::move(g));
  }
  return out;
}

}  // namespace interprobe::telemetry
