#pragma once
// The compute sweep, shared by every engine: memory ceilings, launch floor, the square-GEMM peak
// per dtype, then GEMMs at every (shape, M, dtype), each timed with the bandwidth sweep's
// adaptive stop (probes/bandwidth/sweep.hpp: calibrated batches, CV target, budget, 95% CI of
// the median), checked once against the double reference and placed on the roofline.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "probes/bandwidth/sweep.hpp"
#include "probes/runner/measurement_windows.hpp"
#include "probes/compute/compute_engine.hpp"
#include "model/compute.hpp"

namespace interprobe {

// A weight shape W[N x K] with its name in the report.
struct ComputeShape {
  std::string name;
  std::int64_t n = 0, k = 0;
  // Measured in this dtype only (run: each model's shapes in its own weight dtype); all when null.
  std::optional<report::ComputeDtype> dtype;
};

struct ComputeRequest {
  std::vector<report::ComputeEngineKind> engines{report::ComputeEngineKind::host, report::ComputeEngineKind::cuda};
  report::ComputePlan plan = report::ComputePlan::quick;
  std::vector<ComputeShape> shapes;
  std::vector<std::int64_t> m_values;
  std::vector<report::ComputeDtype> dtypes;  // empty: every dtype the engine supports
  std::optional<std::int64_t> peak_size;     // empty: the engine's hint
  SweepOptions sweep;                        // stop rule only: sizes and passes are not used
  unsigned host_threads = 0;                 // 0: every CPU this process may run on
  // The host engine's GEMM points stop being measured after this many seconds (the rest are
  // noted skipped): `run` prices GPUs, and a large model's shapes take minutes on a few CPUs.
  std::optional<double> host_points_limit_s;
  const MeasurementWindows* windows = nullptr;  // telemetry beside each timed GEMM (GPU engines)
};

// Plans. quick: Llama-3-8B gate_up at tp=4 (7168x4096: weights of 56 MiB in bf16, above a
// 32 MiB L3) at M = 1, 2, 4 ... 512, short budgets. full: Llama-3-8B layer shapes at tp=1 (qkv
// 6144x4096, o 4096x4096, gate_up 28672x4096, down 4096x14336) at M = 1 ... 512 and the
// prefill sizes 1024 ... 8192.
ComputeRequest compute_plan(report::ComputePlan plan);

// Throws InputError naming the option for values no sweep can use.
void validate_compute_request(const ComputeRequest& request);

// One measured operation: `run_s(count)` returns the seconds of `count` back-to-back operations.
report::ComputeTiming time_operation(const std::function<double(std::uint64_t)>& run_s, const ComputeTimingHints& hints,
                                     const SweepOptions& options);

using ComputeProgress = std::function<void(const std::string&)>;

// Measures what `engine` offers into `result` (identity first, then ceilings, peaks and points
// as each finishes, so Ctrl-C keeps what was measured). Throws UnsupportedError when none of
// the requested dtypes runs on the engine.
void run_compute_engine(ComputeEngine& engine, const ComputeRequest& request, report::ComputeEngineResult& result,
                        const ComputeProgress& progress = nullptr);

}  // namespace interprobe
