#include "probes/compute/compute_sweep.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include <fmt/format.h>

#include "probes/compute/pattern.hpp"
#include "probes/compute/roofline.hpp"
#include "common/errors.hpp"
#include "common/units.hpp"

namespace interprobe {

using report::ComputeDtype;

namespace {

std::vector<std::int64_t> powers_of_two(std::int64_t from, std::int64_t to) {
  std::vector<std::int64_t> out;
  for (std::int64_t m = from; m <= to; m *= 2) out.push_back(m);
  return out;
}

// The bandwidth sweep's copy engine seam, driven by a timed operation: one "copy" is one
// operation, so measure_size() brings its calibration, stop rule and statistics unchanged.
class TimedOperation final : public CopyEngine {
 public:
  TimedOperation(const std::function<double(std::uint64_t)>& run_s, const ComputeTimingHints& hints)
      : run_s_(run_s), hints_(hints) {}
  report::BandwidthSweep describe() const override { return {}; }
  TimingHints timing() const override { return {hints_.min_sample_us, hints_.max_ops_per_sample}; }
  std::uint64_t max_bytes() const override { return std::numeric_limits<std::uint64_t>::max(); }
  void prepare(std::uint64_t) override {}
  double copy_us(std::uint64_t count) override { return run_s_(count) * 1e6; }
  bool verify() override { return true; }  // results are checked once per point by check_gemm

 private:
  const std::function<double(std::uint64_t)>& run_s_;
  ComputeTimingHints hints_;
};

}  // namespace

ComputeRequest compute_plan(report::ComputePlan plan) {
  using report::ComputePlan;
  ComputeRequest r;
  r.plan = plan;
  r.sweep.target_cv = 0.02;
  r.sweep.min_samples = 6;
  r.sweep.passes = 1;
  if (plan == ComputePlan::quick) {
    r.shapes = {{"gate_up_tp4", 7168, 4096}};
    r.m_values = powers_of_two(1, 512);
    r.sweep.size_budget_s = 0.1;
    r.sweep.max_samples = 30;
  } else if (plan == ComputePlan::full) {
    r.shapes = {{"qkv", 6144, 4096}, {"o", 4096, 4096}, {"gate_up", 28672, 4096}, {"down", 4096, 14336}};
    r.m_values = powers_of_two(1, 8192);
    r.sweep.size_budget_s = 0.5;
    r.sweep.max_samples = 200;
  } else {
    throw InputError(fmt::format("compute plan '{}': use quick or full", to_string(plan)));
  }
  return r;
}

void validate_compute_request(const ComputeRequest& r) {
  if (r.engines.empty()) throw InputError("--engine: give host, cuda or all");
  if (r.shapes.empty()) throw InputError("--shapes: give at least one NxK weight shape, e.g. 4096x4096");
  for (const auto& s : r.shapes)
    if (s.n < 1 || s.k < 1 || s.n > (1 << 20) || s.k > (1 << 20))
      throw InputError(fmt::format("--shapes {}x{}: give N and K from 1 to 1048576", s.n, s.k));
  if (r.m_values.empty()) throw InputError("--m: give at least one M, e.g. 1,8,64");
  for (auto m : r.m_values)
    if (m < 1 || m > (1 << 20)) throw InputError(fmt::format("--m {}: give M from 1 to 1048576", m));
  if (r.peak_size && (*r.peak_size < 64 || *r.peak_size > 65536))
    throw InputError(fmt::format("--peak-size {}: give 64 to 65536", *r.peak_size));
  if (!(r.sweep.target_cv > 0) || r.sweep.target_cv >= 1)
    throw InputError(fmt::format("--target-cv {}: give a fraction above 0 and below 1", r.sweep.target_cv));
  if (r.host_threads > 1024) throw InputError(fmt::format("--threads {}: give 1 to 1024", r.host_threads));
}

report::ComputeTiming time_operation(const std::function<double(std::uint64_t)>& run_s, const ComputeTimingHints& hints,
                                     const SweepOptions& options) {
  TimedOperation op(run_s, hints);
  SweepOptions o = options;
  o.passes = 1;  // re-preparing a GEMM between passes costs more than the drift it would spread
  report::BandwidthPoint p = measure_size(op, 1, o, 1);
  report::ComputeTiming t;
  t.samples = p.samples;
  t.ops_per_sample = p.copies_per_sample;
  t.min_us = p.min_us;
  t.median_us = p.median_us;
  t.p95_us = p.p95_us;
  t.max_us = p.max_us;
  t.cv_fraction = p.cv_fraction;
  t.median_ci_low_us = p.median_ci_low_us;
  t.median_ci_high_us = p.median_ci_high_us;
  t.stop_reason = p.stop_reason;
  return t;
}

namespace {

void say(const ComputeProgress& progress, const std::string& text) {
  if (progress) progress(text);
}

std::vector<ComputeDtype> select_dtypes(ComputeEngine& engine, const ComputeRequest& r, report::ComputeEngineResult& result) {
  std::vector<ComputeDtype> chosen;
  std::string why_not;
  for (const auto& entry : names(ComputeDtype{})) {
    report::DtypeSupport s = engine.supports(entry.value);
    s.dtype = entry.value;
    result.dtypes.push_back(s);
    // Weight-only dtypes (decoded to f32 by the engine) are measured when asked for by name.
    bool wanted = r.dtypes.empty() ? !s.weight_only
                                   : std::find(r.dtypes.begin(), r.dtypes.end(), entry.value) != r.dtypes.end();
    if (!wanted) continue;
    if (s.supported) chosen.push_back(entry.value);
    else if (!r.dtypes.empty()) {
      std::string line = fmt::format("{}: {}", entry.name, s.reason.value_or("not supported"));
      result.notes.push_back("dtype " + line);
      why_not += (why_not.empty() ? "" : "; ") + line;
    }
  }
  if (chosen.empty())
    throw UnsupportedError(fmt::format("{} compute engine runs none of the requested dtypes ({})",
                                       to_string(result.engine), why_not.empty() ? "none supported" : why_not));
  return chosen;
}

void measure_memory(ComputeEngine& engine, const ComputeRequest& r, report::ComputeEngineResult& result,
                    const ComputeProgress& progress) {
  auto hints = engine.timing();
  auto variants = engine.stream_variants();
  for (std::size_t v = 0; v < variants.size(); ++v) {
    say(progress, fmt::format("compute {}: memory read {}", to_string(result.engine), variants[v].name));
    engine.prepare_stream(v, hints.stream_bytes);
    std::function<double(std::uint64_t)> run = [&](std::uint64_t n) { return engine.stream_read_s(n); };
    report::MemoryCeiling c;
    c.name = variants[v].name;
    c.threads = variants[v].threads;
    c.bytes = static_cast<std::int64_t>(hints.stream_bytes);
    c.timing = time_operation(run, hints, r.sweep);
    engine.release_stream();
    c.gbps = c.timing.median_us > 0 ? static_cast<double>(c.bytes) / (c.timing.median_us * 1e3) : 0;
    if (!result.memory_ceiling_gbps || c.gbps > *result.memory_ceiling_gbps) result.memory_ceiling_gbps = c.gbps;
    result.memory.push_back(c);
  }
}

void measure_launch_floor(ComputeEngine& engine, const ComputeRequest& r, report::ComputeEngineResult& result) {
  if (auto why = engine.launch_floor_unsupported()) {
    result.launch_floor_reason = *why;
    return;
  }
  std::function<double(std::uint64_t)> run = [&](std::uint64_t n) { return engine.empty_launches_s(n); };
  result.launch_floor_us = time_operation(run, engine.timing(), r.sweep).median_us;
  if (auto graph = engine.graph_launch_s()) result.launch_floor_graph_us = *graph * 1e6;
}

// Prepares, times and checks one GEMM; the engine keeps its buffers until the next prepare.
// `telemetry`: what the sampler saw while it was timed (null when nothing samples).
std::pair<report::ComputeTiming, report::GemmCheck> measure_gemm(ComputeEngine& engine, const GemmShape& shape, ComputeDtype dtype,
                                                                 const ComputeRequest& r,
                                                                 std::optional<report::MeasurementTelemetry>& telemetry) {
  engine.prepare(shape, dtype);
  std::function<double(std::uint64_t)> run = [&](std::uint64_t n) { return engine.gemm_s(n); };
  SpanLog span;
  span.begin();
  auto timing = time_operation(run, engine.timing(), r.sweep);
  span.end();
  telemetry = summarize_spans(r.windows, span);
  return {timing, check_gemm(engine, shape, dtype)};
}

// A point faster than the square "peak" GEMM shows that the square one did not reach the peak
// (too small for the device: latency-bound): a fraction of it would read above 1. The dtype's
// points are then derived against the fastest point instead, and the note says so.
void rebase_on_fastest_point(report::ComputeEngineResult& result, ComputeDtype dtype, Ceilings ceilings) {
  if (!ceilings.peak_tflops) return;
  const report::GemmPoint* fastest = nullptr;
  for (const auto& p : result.points)
    if (p.dtype == dtype && (!fastest || p.tflops > fastest->tflops)) fastest = &p;
  if (!fastest || !(fastest->tflops > *ceilings.peak_tflops)) return;
  result.notes.push_back(fmt::format(
      "{} peak: the square GEMM measured {:.3g} TFLOP/s, below the {:.3g} TFLOP/s of M={} {}x{} (the square one did "
      "not saturate the device); peak_fraction and the roofline bound of {} points use {:.3g} TFLOP/s",
      to_string(dtype), *ceilings.peak_tflops, fastest->tflops, fastest->m, fastest->n, fastest->k, to_string(dtype),
      fastest->tflops));
  ceilings.peak_tflops = fastest->tflops;
  for (auto& p : result.points)
    if (p.dtype == dtype) derive_point(p, ceilings);
}

}  // namespace

namespace {

void measure_peaks(ComputeEngine& engine, const ComputeRequest& r, const std::vector<ComputeDtype>& dtypes,
                   report::ComputeEngineResult& result, const ComputeProgress& progress) {
  std::int64_t peak_size = r.peak_size.value_or(engine.timing().peak_size);
  for (auto dtype : dtypes) {
    say(progress, fmt::format("compute {}: peak {} {}^3", to_string(result.engine), to_string(dtype), peak_size));
    GemmShape square{peak_size, peak_size, peak_size};
    report::ComputePeak peak;
    peak.dtype = dtype;
    peak.size = peak_size;
    try {
      std::tie(peak.timing, peak.check) = measure_gemm(engine, square, dtype, r, peak.telemetry);
    } catch (const UnsupportedError& e) {
      result.notes.push_back(fmt::format("{} peak {}^3 skipped: {}", to_string(dtype), peak_size, e.what()));
      continue;
    }
    peak.measured_tflops = peak.timing.median_us > 0 ? gemm_flop(peak_size, peak_size, peak_size) / (peak.timing.median_us * 1e6) : 0;
    std::tie(peak.published_tflops, peak.published_basis) = engine.published_peak(dtype);
    result.peaks.push_back(peak);
  }
}

// Why a point is not measured, before it is tried; empty when it is.
std::string why_skipped(const GemmShape& g, ComputeDtype dtype, std::uint64_t max_bytes, double limit_s,
                        std::chrono::steady_clock::time_point started) {
  if (double bytes = gemm_bytes(g.m, g.n, g.k, dtype); bytes > static_cast<double>(max_bytes))
    return fmt::format("its buffers need {} of the {} the engine may use", format_bytes(static_cast<std::uint64_t>(bytes)),
                       format_bytes(max_bytes));
  if (std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > limit_s)
    return fmt::format("the {:g} s this engine's GEMMs may take here were spent (`interprobe compute --engine host "
                       "--shapes {}x{} --m {} --dtype {}` measures it)",
                       limit_s, g.n, g.k, g.m, to_string(dtype));
  return {};
}

void measure_points(ComputeEngine& engine, const ComputeRequest& r, const std::vector<ComputeDtype>& dtypes,
                    report::ComputeEngineResult& result, const ComputeProgress& progress) {
  const std::uint64_t max_bytes = engine.max_bytes();
  const double none = std::numeric_limits<double>::infinity();
  const double limit_s = result.engine == report::ComputeEngineKind::host ? r.host_points_limit_s.value_or(none) : none;
  auto started = std::chrono::steady_clock::now();
  for (auto dtype : dtypes) {
    Ceilings ceilings{result.memory_ceiling_gbps, std::nullopt, result.launch_floor_us};
    for (const auto& p : result.peaks)
      if (p.dtype == dtype) ceilings.peak_tflops = p.measured_tflops;
    for (const auto& s : r.shapes)
      for (auto m : r.m_values) {
        if (s.dtype && *s.dtype != dtype) continue;
        if (auto why = why_skipped({m, s.n, s.k}, dtype, max_bytes, limit_s, started); !why.empty()) {
          result.notes.push_back(fmt::format("{} M={} {}x{} skipped: {}", to_string(dtype), m, s.n, s.k, why));
          continue;
        }
        say(progress, fmt::format("compute {}: {} {} M={}", to_string(result.engine), to_string(dtype), s.name, m));
        report::GemmPoint point;
        point.shape = s.name;
        point.m = m;
        point.n = s.n;
        point.k = s.k;
        point.dtype = dtype;
        try {
          std::tie(point.timing, point.check) = measure_gemm(engine, {m, s.n, s.k}, dtype, r, point.telemetry);
        } catch (const UnsupportedError& e) {  // the library has no kernel for this one shape
          result.notes.push_back(fmt::format("{} M={} {}x{} skipped: {}", to_string(dtype), m, s.n, s.k, e.what()));
          continue;
        }
        derive_point(point, ceilings);
        result.points.push_back(point);
      }
    rebase_on_fastest_point(result, dtype, ceilings);
  }
}

}  // namespace

void run_compute_engine(ComputeEngine& engine, const ComputeRequest& r, report::ComputeEngineResult& result,
                        const ComputeProgress& progress) {
  auto kind = result.engine;
  result = engine.describe();
  result.engine = kind;
  auto dtypes = select_dtypes(engine, r, result);
  measure_memory(engine, r, result, progress);
  measure_launch_floor(engine, r, result);
  measure_peaks(engine, r, dtypes, result, progress);
  measure_points(engine, r, dtypes, result, progress);
  for (auto& note : engine.notes()) result.notes.push_back(std::move(note));
  engine.release();
}

}  // namespace interprobe
