#pragma once
// One flat view of every number a report holds, for the readers that compare numbers rather than
// sections: `check` (policies), `compare` (two reports), Prometheus and the fleet report. Each row
// has a stable path ("bandwidth/host/memcpy/node0->node0/x1/256MiB/gbps"), its unit, which way is
// better, the spread behind it when it was measured, and labels for exporters. Rows come in
// report order; paths are unique within a report.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/report.hpp"

namespace interprobe::report {

enum class Better { higher, lower, neither };
INTERPROBE_DECLARE_ENUM(Better);

// What the samples behind a measured number looked like; absent for numbers that were read, not timed.
// A bandwidth fit's rows carry the fit's scatter: samples = points used, cv = its residual fraction.
struct MetricSpread {
  std::int64_t samples = 0;
  std::optional<double> min, max;          // in the metric's unit
  std::optional<double> cv_fraction;       // of the samples
  std::optional<double> interval_low, interval_high;  // 95% interval of the value, when the report has one
  // Where most samples fell (times: min to p95; rates: their inverse), when the report keeps both:
  // compare calls a difference noise when one run's value lies inside the other's typical range.
  std::optional<double> typical_low, typical_high;
  // The lowest and highest of the run's per-pass medians, when it kept two or more: each pass ran at
  // another moment on buffers of its own, so their spread is the run's own view of what a rerun
  // moves. compare calls a difference noise when two runs' pass ranges overlap.
  std::optional<double> passes_low, passes_high;
  // The values the measurement cannot tell from this one, when the report says: host copies, a
  // few CPU cycles per copy either way (see kCopyLoopCycles), as times or as the rates they give
  // (high is infinite when the time is within the resolution of zero). compare calls a value
  // inside the other run's range noise.
  std::optional<double> resolution_low, resolution_high;

  static MetricSpread of(std::int64_t samples, std::optional<double> cv_fraction) {
    MetricSpread s;
    s.samples = samples;
    s.cv_fraction = cv_fraction;
    return s;
  }
};

// A row's identity as typed fields, each set where the row is made (metrics.cpp); the path is
// written from them, for display and for policy selectors, and no reader splits it back.
struct MetricRow {
  std::string section;  // "bandwidth": the report's key
  // The kind of row within the section, as exporters name it: "bandwidth" (a sweep's points),
  // "bandwidth_fit", "p2p", "allreduce", "compute_gemm", "topology_gpu_link", "probe", ...
  std::string family;
  // The path up to the sweep point: "bandwidth/host/memcpy/node0->node0/pageable/x1",
  // "collective/nccl/in_place", "compute/cuda/bf16/gate_up_tp4", "bandwidth/<sweep>/fit".
  std::string series;
  std::optional<std::int64_t> bytes;   // a sweep point's message or copy size
  std::optional<std::int64_t> tokens;  // a GEMM point's M
  std::string leaf;                    // the figure: "gbps", "time_us", "peak_gbps"
  int repeat = 1;                      // a second sweep over the same series in one report: 2, ...
  // A bandwidth sweep's own key ("host/memcpy/node0->node0/x1") for its points, fit and expected
  // rate; empty elsewhere.
  std::string sweep;
  std::string path;  // series[/point]/leaf[#repeat]: "bandwidth/host/memcpy/node0->node0/x1/256MiB/gbps"
  double value = 0;
  std::string unit;  // the key's suffix: gbps, us, s, bytes, gts, lanes, count, fraction
  Better better = Better::neither;
  std::optional<MetricSpread> spread;
  std::map<std::string, std::string> labels;  // section, engine, kind, src, dst, bytes, backend, ...
};

std::vector<MetricRow> metrics_of(const Report& report);

// "256MiB" for a size, "m16" for a token count; empty for a row that is no sweep point.
std::string point_segment(const MetricRow& row);
// The row's series over its points: the path with the point as "*"
// ("bandwidth/host/memcpy/node0->node0/x1/*/gbps"); nullopt for a row that is no sweep point.
std::optional<std::string> series_path(const MetricRow& row);
// The point a row belongs to: rows of one point (its time and its rate) share it.
std::string point_path(const MetricRow& row);

// "8B", "4KiB", "256MiB", "1GiB"; sizes that are not a whole binary unit stay in bytes ("1000B").
std::string size_segment(std::int64_t bytes);

}  // namespace interprobe::report
