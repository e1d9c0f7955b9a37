#pragma once
// The sweep engine: for each size, warm up, calibrate a batch so each sample lasts long
// enough for the clock, verify the data once, then sample until the coefficient of variation
// reaches the target or the size's time budget runs out.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "probes/bandwidth/copy_engine.hpp"
#include "common/statistics.hpp"
#include "report/model/bandwidth.hpp"

namespace interprobe {

struct SweepOptions {
  std::vector<std::uint64_t> sizes;
  double target_cv = 0.01;
  int min_samples = 5;        // the stop rule looks at the CV only from here on
  int max_samples = 200;
  double size_budget_s = 0.25;  // per size, after the minimum samples
  int warmup_copies = 1;        // untimed copies per size; calibration adds at least one more
};

// Why sampling of one size stopped: the report's vocabulary.
using report::StopReason;

// The stop rule alone, for tests: nullopt = take another sample.
std::optional<StopReason> should_stop(const SampleStats& stats, const SweepOptions& options, double elapsed_s);

// One size measured: its point (gbps counts `directions`).
report::BandwidthPoint measure_size(CopyEngine& engine, std::uint64_t bytes, const SweepOptions& options,
                                    std::int64_t directions);

// Called after each finished size with its point; the caller stores it (partial results).
using PointSink = std::function<void(const report::BandwidthPoint&)>;

// Runs every size through `engine`; throws InterruptedError between samples on Ctrl-C (the
// sink has seen every finished size by then).
void run_sweep(CopyEngine& engine, const SweepOptions& options, const PointSink& on_point);

// Fit over the finished points of a sweep (medians; bidirectional sweeps count both ways).
std::optional<report::BandwidthFit> fit_sweep(const report::BandwidthSweep& sweep);

}  // namespace interprobe
