#include "probes/bandwidth/sweep.hpp"

#include <algorithm>
#include <cmath>

#include "probes/bandwidth/fit.hpp"
#include "common/interrupt.hpp"
#include "common/stopwatch.hpp"

namespace interprobe {

std::optional<StopReason> should_stop(const SampleStats& stats, const SweepOptions& o, double elapsed_s) {
  auto n = static_cast<int>(stats.samples);
  int floor = std::max(2, o.min_samples);
  if (n >= floor && stats.cv <= o.target_cv) return StopReason::target_cv;
  if (n >= o.max_samples) return StopReason::max_samples;
  if (n >= floor && elapsed_s >= o.size_budget_s) return StopReason::budget;
  return std::nullopt;
}

namespace {

// Copies per sample so that one sample lasts at least the engine's minimum: the first copies
// of a size warm caches and TLBs, then the batch grows until the clock sees enough time.
std::uint64_t calibrate_batch(CopyEngine& engine, const TimingHints& hints) {
  std::uint64_t batch = 1;
  for (int round = 0; round < 24; ++round) {
    throw_if_interrupted();
    double t = engine.copy_us(batch);
    if (t >= hints.min_sample_us || batch >= hints.max_copies_per_sample) break;
    double grow = t > 0 ? hints.min_sample_us / t * 1.25 : 16.0;
    grow = std::clamp(grow, 2.0, 1024.0);
    batch = std::min<std::uint64_t>(hints.max_copies_per_sample,
                                    static_cast<std::uint64_t>(std::ceil(static_cast<double>(batch) * grow)));
  }
  return batch;
}

}  // namespace

report::BandwidthPoint measure_size(CopyEngine& engine, std::uint64_t bytes, const SweepOptions& o,
                                    std::int64_t directions) {
  throw_if_interrupted();
  engine.prepare(bytes);
  if (o.warmup_copies > 0) engine.copy_us(static_cast<std::uint64_t>(o.warmup_copies));
  report::BandwidthPoint point;
  point.bytes = static_cast<std::int64_t>(bytes);
  point.verified = engine.verify();
  TimingHints hints = engine.timing();
  std::uint64_t batch = calibrate_batch(engine, hints);

  std::vector<double> per_copy_us;
  SampleStats stats;
  Stopwatch clock;
  std::optional<StopReason> stop;
  while (!stop) {
    throw_if_interrupted();
    per_copy_us.push_back(engine.copy_us(batch) / static_cast<double>(batch));
    stats = summarize(per_copy_us);
    stop = should_stop(stats, o, clock.elapsed_s());
  }
  point.samples = static_cast<std::int64_t>(stats.samples);
  point.copies_per_sample = static_cast<std::int64_t>(batch);
  point.min_us = stats.min;
  point.median_us = stats.median;
  point.p95_us = stats.p95;
  point.max_us = stats.max;
  point.cv_fraction = stats.cv;
  point.gbps = stats.median > 0
                   ? static_cast<double>(bytes) * static_cast<double>(directions) / (stats.median * 1e3)
                   : 0;
  point.stop_reason = *stop;
  return point;
}

void run_sweep(CopyEngine& engine, const SweepOptions& o, const PointSink& on_point) {
  if (o.sizes.empty()) return;
  std::int64_t directions = engine.describe().directions;
  engine.reserve(*std::max_element(o.sizes.begin(), o.sizes.end()));
  for (std::uint64_t bytes : o.sizes) on_point(measure_size(engine, bytes, o, directions));
}

std::optional<report::BandwidthFit> fit_sweep(const report::BandwidthSweep& sweep) {
  std::vector<TimedSize> pts;
  for (const auto& p : sweep.points)
    pts.push_back({static_cast<double>(p.bytes) * static_cast<double>(sweep.directions), p.median_us});
  return fit_latency_bandwidth(pts);
}

}  // namespace interprobe
