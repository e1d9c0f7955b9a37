#include "probes/bandwidth/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

#include "probes/bandwidth/fit.hpp"
#include "common/errors.hpp"
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

std::vector<std::size_t> visit_order(std::size_t sizes, int passes, std::uint64_t seed) {
  std::vector<std::size_t> order;
  std::mt19937_64 rng(seed);
  for (int pass = 0; pass < std::max(1, passes); ++pass) {
    std::vector<std::size_t> perm(sizes);
    std::iota(perm.begin(), perm.end(), std::size_t{0});
    for (std::size_t i = sizes; i > 1; --i) std::swap(perm[i - 1], perm[rng() % i]);
    // A size measured twice in a row would see the same moment of the machine twice.
    if (sizes > 1 && !order.empty() && perm.front() == order.back()) std::swap(perm.front(), perm.back());
    order.insert(order.end(), perm.begin(), perm.end());
  }
  return order;
}

namespace {

// What one size has gathered over its visits.
struct SizeState {
  std::uint64_t bytes = 0;
  std::vector<double> per_copy_us;
  std::vector<double> visit_medians_us;  // each finished visit's own median
  std::uint64_t batch = 0;  // copies per sample, calibrated on the first visit
  double sampling_s = 0;    // time spent sampling, all visits
  bool verified = true;
  int visits = 0;            // started
  int finished_visits = 0;
  std::set<int> cpus;
  std::optional<StopReason> stop;
  SpanLog spans;  // when each visit sampled
};

// The stop rule of pass `pass` (0-based) of `passes`: its share of the size's limits.
SweepOptions pass_share(const SweepOptions& o, int pass, int passes) {
  SweepOptions share = o;
  double f = static_cast<double>(pass + 1) / passes;
  share.min_samples = static_cast<int>(std::ceil(o.min_samples * f));
  share.max_samples = std::max(1, static_cast<int>(std::ceil(o.max_samples * f)));
  share.size_budget_s = o.size_budget_s * f;
  return share;
}

void visit_size(CopyEngine& engine, const SweepOptions& o, int pass, SizeState& state) {
  throw_if_interrupted();
  engine.prepare(state.bytes);
  if (o.warmup_copies > 0) engine.copy_us(static_cast<std::uint64_t>(o.warmup_copies));
  state.verified = engine.verify() && state.verified;
  if (state.visits++ == 0) state.batch = calibrate_batch(engine, engine.timing());
  SweepOptions share = pass_share(o, pass, std::max(1, o.passes));
  Stopwatch clock;
  double before_s = state.sampling_s;
  state.spans.begin();
  std::size_t first_sample = state.per_copy_us.size();
  do {
    throw_if_interrupted();
    state.per_copy_us.push_back(engine.copy_us(state.batch) / static_cast<double>(state.batch));
    state.sampling_s = before_s + clock.elapsed_s();
    state.stop = should_stop(summarize(state.per_copy_us), share, state.sampling_s);
  } while (!state.stop);
  state.spans.end();
  state.visit_medians_us.push_back(
      summarize(std::vector<double>(state.per_copy_us.begin() + static_cast<std::ptrdiff_t>(first_sample), state.per_copy_us.end())).median);
  for (int cpu : engine.copy_cpus()) state.cpus.insert(cpu);
  ++state.finished_visits;
}

report::BandwidthPoint to_point(const SizeState& state, std::int64_t directions, int passes, const MeasurementWindows* windows) {
  SampleStats stats = summarize(state.per_copy_us);
  report::BandwidthPoint point;
  point.bytes = static_cast<std::int64_t>(state.bytes);
  point.verified = state.verified;
  point.samples = static_cast<std::int64_t>(stats.samples);
  point.copies_per_sample = static_cast<std::int64_t>(state.batch);
  point.min_us = stats.min;
  point.median_us = stats.median;
  point.p95_us = stats.p95;
  point.max_us = stats.max;
  point.cv_fraction = stats.cv;
  point.gbps = stats.median > 0
                   ? static_cast<double>(state.bytes) * static_cast<double>(directions) / (stats.median * 1e3)
                   : 0;
  if (auto interval = median_interval(state.per_copy_us)) {
    point.median_ci_low_us = interval->low;
    point.median_ci_high_us = interval->high;
  }
  if (state.visit_medians_us.size() > 1) point.visit_medians_us = state.visit_medians_us;
  point.copy_cpus.assign(state.cpus.begin(), state.cpus.end());
  point.telemetry = summarize_spans(windows, state.spans);
  if (state.finished_visits < passes) point.stop_reason = StopReason::interrupted;
  else if (state.stop) point.stop_reason = *state.stop;
  return point;
}

}  // namespace

report::BandwidthPoint measure_size(CopyEngine& engine, std::uint64_t bytes, const SweepOptions& o,
                                    std::int64_t directions) {
  SizeState state;
  state.bytes = bytes;
  int passes = std::max(1, o.passes);
  for (int pass = 0; pass < passes; ++pass) visit_size(engine, o, pass, state);
  return to_point(state, directions, passes, o.windows);
}

void run_sweep(CopyEngine& engine, const SweepOptions& o, const PointSink& on_point, const VisitSink& on_visit) {
  if (o.sizes.empty()) return;
  std::int64_t directions = engine.describe().directions;
  engine.reserve(*std::max_element(o.sizes.begin(), o.sizes.end()));
  int passes = std::max(1, o.passes);
  std::vector<SizeState> states(o.sizes.size());
  for (std::size_t i = 0; i < states.size(); ++i) states[i].bytes = o.sizes[i];
  auto order = visit_order(o.sizes.size(), passes, o.order_seed);
  // After Ctrl-C a size that finished some of its passes is kept, marked "interrupted" (its
  // samples are real, only fewer); one interrupted in its first pass is dropped.
  auto emit_finished = [&] {
    std::vector<const SizeState*> done;
    for (const auto& s : states)
      if (s.finished_visits > 0) done.push_back(&s);
    std::stable_sort(done.begin(), done.end(), [](const auto* a, const auto* b) { return a->bytes < b->bytes; });
    for (const auto* s : done) on_point(to_point(*s, directions, passes, o.windows));
  };
  try {
    for (std::size_t v = 0; v < order.size(); ++v) {
      if (v > 0 && v % o.sizes.size() == 0) engine.replace_buffers();  // a new pass
      SizeState& state = states[order[v]];
      visit_size(engine, o, state.visits, state);
      if (on_visit) on_visit(state.bytes, v + 1, order.size());
    }
  } catch (const InterruptedError&) {
    emit_finished();
    throw;
  }
  emit_finished();
}

std::optional<report::BandwidthFit> fit_sweep(const report::BandwidthSweep& sweep) {
  std::vector<TimedSize> pts;
  for (const auto& p : sweep.points)
    pts.push_back({static_cast<double>(p.bytes) * static_cast<double>(sweep.directions), p.median_us});
  return fit_latency_bandwidth(pts);
}

}  // namespace interprobe
