// Findings from the compute section: wrong GEMM results, engines that could not run, decode
// GEMMs held by memory bandwidth, and points no measured ceiling can explain. One finding per
// cause and engine: the points are its `affected` list, their numbers lists in the evidence.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "report/analysis/findings.hpp"

namespace interprobe::analysis {

namespace {

using report::ComputeEngineResult;
using report::EngineStatus;
using report::Finding;
using report::GemmPoint;
using report::Severity;
using report::Value;
using report::ValueList;

// Small M is what a decode step multiplies: one row per sequence in the batch.
constexpr std::int64_t kDecodeMaxM = 32;
// Above the ceiling by more than the noise of two medians: not a measurement of this memory.
constexpr double kInconsistentFraction = 1.10;

std::string point_name(const ComputeEngineResult& e, const GemmPoint& p) {
  return fmt::format("{} {} {} M={} ({}x{}x{})", to_string(e.engine), to_string(p.dtype), p.shape, p.m, p.m, p.n, p.k);
}

void engine_status(const ComputeEngineResult& e, std::vector<Finding>& out) {
  if (e.status != EngineStatus::unsupported && e.status != EngineStatus::failed) return;
  const bool failed = e.status == EngineStatus::failed;
  const std::string engine = to_string(e.engine);
  Finding f = make_finding(failed ? "compute.engine_failed" : "compute.engine_unsupported", failed ? Severity::warn : Severity::info,
                           fmt::format("{} compute not measured: {}", engine, e.reason.value_or(to_string(e.status))),
                           "read the reason; rerun `interprobe compute --engine " + engine + "`");
  f.affected = {engine};
  f.evidence = {{"reason", e.reason ? Value(*e.reason) : Value(nullptr)}};
  out.push_back(std::move(f));
}

void verification(const ComputeEngineResult& e, std::vector<Finding>& out) {
  std::vector<std::string> affected;
  ValueList errors, tolerances;
  auto add = [&](const std::string& what, const std::optional<report::GemmCheck>& c) {
    if (!c || c->passed) return;
    affected.push_back(what);
    errors.push_back(Value(c->max_relative_error));
    tolerances.push_back(Value(c->tolerance));
  };
  for (const auto& p : e.peaks) add(fmt::format("{} {} peak {}^3", to_string(e.engine), to_string(p.dtype), p.size), p.check);
  for (const auto& p : e.points) add(point_name(e, p), p.check);
  if (affected.empty()) return;
  Finding f = make_finding("compute.verification_failed", Severity::fail,
                           fmt::format("{} GEMM returned wrong results: {}", to_string(e.engine),
                                       affected.size() == 1 ? affected.front() : fmt::format("{} shapes", affected.size())),
                           "do not trust this engine's numbers: rerun; if it repeats, update the BLAS library or driver "
                           "and check memory errors (dmesg, nvidia-smi -q -d ECC)");
  f.affected = std::move(affected);
  f.evidence = {{"max_relative_error", errors}, {"tolerance", tolerances}};
  out.push_back(std::move(f));
}

void decode_memory_bound(const ComputeEngineResult& e, std::vector<Finding>& out) {
  for (const auto& entry : names(report::ComputeDtype{})) {
    std::vector<const GemmPoint*> decode;
    for (const auto& p : e.points)
      if (p.dtype == entry.value && p.m <= kDecodeMaxM && p.bound && p.peak_fraction && p.memory_bandwidth_fraction)
        decode.push_back(&p);
    if (decode.empty()) continue;
    bool all_memory = std::all_of(decode.begin(), decode.end(), [](const auto* p) { return p->bound == report::RooflineBound::memory; });
    if (!all_memory) continue;
    double best_peak = 0, best_memory = 0;
    std::int64_t largest_m = 0;
    for (const auto* p : decode) {
      best_peak = std::max(best_peak, *p->peak_fraction);
      best_memory = std::max(best_memory, *p->memory_bandwidth_fraction);
      largest_m = std::max(largest_m, p->m);
    }
    Finding f = make_finding(
        "compute.decode_memory_bound", Severity::info,
        fmt::format("{} {} decode GEMMs (M <= {}) are memory-bound: at most {:.0f}% of the measured peak, {:.0f}% of the "
                    "measured memory bandwidth",
                    to_string(e.engine), entry.name, largest_m, 100 * best_peak, 100 * best_memory),
        "more tokens per weight read moves them: a larger decode batch (M) costs little time until the bound turns to "
        "compute; fewer weight bytes (a smaller dtype, quantized weights) speed each step");
    for (const auto* p : decode) f.affected.push_back(point_name(e, *p));
    f.evidence = {{"dtype", Value(std::string(entry.name))}, {"max_m", Value(largest_m)},
                  {"best_peak_fraction", Value(best_peak)}, {"best_memory_bandwidth_fraction", Value(best_memory)}};
    out.push_back(std::move(f));
  }
}

void inconsistent_points(const ComputeEngineResult& e, std::vector<Finding>& out) {
  std::vector<std::string> fast_memory, above_peak;
  ValueList memory_fractions, peak_fractions;
  for (const auto& p : e.points) {
    if (p.memory_bandwidth_fraction && *p.memory_bandwidth_fraction > kInconsistentFraction) {
      fast_memory.push_back(point_name(e, p));
      memory_fractions.push_back(Value(*p.memory_bandwidth_fraction));
    }
    // Against the square GEMM itself: the sweep takes peak_fraction against the fastest point
    // when a point beat the square one, so the fraction alone no longer shows it.
    std::optional<double> over_square = p.peak_fraction;
    for (const auto& peak : e.peaks)
      if (peak.dtype == p.dtype && peak.measured_tflops > 0) over_square = p.tflops / peak.measured_tflops;
    if (over_square && *over_square > kInconsistentFraction) {
      above_peak.push_back(point_name(e, p));
      peak_fractions.push_back(Value(*over_square));
    }
  }
  if (!fast_memory.empty()) {
    Finding f = make_finding(
        "compute.inconsistent_point", Severity::warn,
        fmt::format("{} GEMM faster than reading its operands at the measured memory bandwidth: {}", to_string(e.engine),
                    fast_memory.size() == 1 ? fast_memory.front() : fmt::format("{} points", fast_memory.size())),
        "the weights stayed in a cache (shape smaller than the last-level cache) or the clock is wrong: use weight "
        "shapes several times the cache, and read these points as cache, not memory, rates");
    f.affected = std::move(fast_memory);
    f.evidence = {{"memory_bandwidth_fraction", memory_fractions}};
    out.push_back(std::move(f));
  }
  if (!above_peak.empty()) {
    Finding f = make_finding(
        "compute.peak_below_shape", Severity::warn,
        fmt::format("{} square-GEMM peak is below a shape's rate: {}", to_string(e.engine),
                    above_peak.size() == 1 ? above_peak.front() : fmt::format("{} points", above_peak.size())),
        "the peak GEMM did not saturate the device (clocks, other load, too small --peak-size): rerun with a larger "
        "--peak-size; fractions of peak above 100% are not efficiencies");
    f.affected = std::move(above_peak);
    f.evidence = {{"tflops_over_square_peak", peak_fractions}};
    out.push_back(std::move(f));
  }
}

}  // namespace

void rule_compute(const report::Report& report, std::vector<Finding>& out) {
  if (!report.compute) return;
  for (const auto& e : report.compute->engines) {
    engine_status(e, out);
    verification(e, out);
    decode_memory_bound(e, out);
    inconsistent_points(e, out);
  }
}

}  // namespace interprobe::analysis
