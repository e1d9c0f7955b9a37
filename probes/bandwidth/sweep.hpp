#pragma once
// The sweep engine: for each size, warm up, calibrate a batch so each sample lasts long
// enough for the clock, verify the data, then sample until the coefficient of variation
// reaches the target or the size's time budget runs out. The sizes are visited in a shuffled
// order over several passes and each size's samples are pooled, so a slow drift of the machine
// spreads over every size instead of biasing the sizes measured while it lasted.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "probes/bandwidth/copy_engine.hpp"
#include "common/statistics.hpp"
#include "probes/runner/measurement_windows.hpp"
#include "model/bandwidth.hpp"

namespace interprobe {

struct SweepOptions {
  std::vector<std::uint64_t> sizes;
  double target_cv = 0.01;
  // The stop rule looks at the CV only from here on; 6 is the fewest samples whose median has
  // a distribution-free 95% interval (min..max, 96.9%).
  int min_samples = 6;
  int max_samples = 200;
  double size_budget_s = 0.25;  // per size, after the minimum samples
  int warmup_copies = 1;        // untimed copies per visit of a size; calibration adds more
  // Passes over the sizes; pass p (of P) of a size ends at (p+1)/P of its minimum samples,
  // maximum samples and budget, or when the pooled CV reaches the target; every visit samples.
  int passes = 2;
  std::uint64_t order_seed = 0x5eed'0021;  // the shuffled order, fixed so runs are repeatable
  // Telemetry beside each size (GPU paths): every visit's span, summarized into the point.
  const MeasurementWindows* windows = nullptr;
};

// The order of visits: `passes` permutations of [0, sizes), each from a Fisher-Yates shuffle
// driven by mt19937_64(seed) (fully specified, unlike std::shuffle), no size twice in a row
// across a pass boundary when there are two or more sizes.
std::vector<std::size_t> visit_order(std::size_t sizes, int passes, std::uint64_t seed);

// Why sampling of one size stopped: the report's vocabulary.
using report::StopReason;

// The stop rule alone, for tests: nullopt = take another sample.
std::optional<StopReason> should_stop(const SampleStats& stats, const SweepOptions& options, double elapsed_s);

// One size measured through all its passes back to back: its point (gbps counts `directions`).
report::BandwidthPoint measure_size(CopyEngine& engine, std::uint64_t bytes, const SweepOptions& options,
                                    std::int64_t directions);

// Receives the points in ascending size order once the sweep ends; after Ctrl-C, the sizes
// with at least one finished pass (stop_reason "interrupted" when passes are missing).
using PointSink = std::function<void(const report::BandwidthPoint&)>;
// Called after each visit of a size (for progress lines): visits done, of how many.
using VisitSink = std::function<void(std::uint64_t bytes, std::size_t done, std::size_t total)>;

// Runs every size through `engine`; throws InterruptedError between samples on Ctrl-C (the
// sink has seen every finished size by then).
void run_sweep(CopyEngine& engine, const SweepOptions& options, const PointSink& on_point,
               const VisitSink& on_visit = nullptr);

// Fit over the finished points of a sweep (medians; bidirectional sweeps count both ways).
std::optional<report::BandwidthFit> fit_sweep(const report::BandwidthSweep& sweep);

}  // namespace interprobe
