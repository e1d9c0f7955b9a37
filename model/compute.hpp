#pragma once
// The `compute` section (issue 15): GEMM sweeps Y[M x N] = X[M x K] . W^T at decode and prefill
// shapes per engine and dtype, beside the ceilings they are judged against (a large square GEMM
// per dtype, a streaming read of memory, the launch floor where the engine has one) and the
// roofline bound each point falls under.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/bandwidth.hpp"
#include "model/telemetry.hpp"
#include "model/vocabulary.hpp"

namespace interprobe::report {

enum class ComputeEngineKind { host, cuda };
INTERPROBE_DECLARE_ENUM(ComputeEngineKind);

// Element type of X and W; Y and the accumulation are f32 for every dtype here.
enum class ComputeDtype { f32, bf16, f16, fp8_e4m3 };
INTERPROBE_DECLARE_ENUM(ComputeDtype);

// What limits a point, from the measured ceilings (probes/compute/roofline.hpp states the rule).
enum class RooflineBound { memory, compute, latency };
INTERPROBE_DECLARE_ENUM(RooflineBound);

enum class ComputePlan { quick, full, custom };
INTERPROBE_DECLARE_ENUM(ComputePlan);

// Timing statistics of one measured operation; times are per operation (a sample times a batch).
struct ComputeTiming {
  std::int64_t samples = 0;
  std::int64_t ops_per_sample = 1;
  double min_us = 0, median_us = 0, p95_us = 0, max_us = 0;
  double cv_fraction = 0;
  std::optional<double> median_ci_low_us, median_ci_high_us;  // 95%, null below 6 samples
  std::optional<StopReason> stop_reason;
};

// The result check of one GEMM: sampled output elements against a reference computed in double.
struct GemmCheck {
  bool passed = false;
  std::int64_t elements_checked = 0;
  double max_relative_error = 0;  // |y - ref| / sum_k |x_k w_k| over the checked elements
  double tolerance = 0;
};

struct GemmPoint {
  std::string shape;  // the weight shape's name ("o", "gate_up", or "NxK" for --shapes)
  std::int64_t m = 0, n = 0, k = 0;
  ComputeDtype dtype = ComputeDtype::f32;
  ComputeTiming timing;
  double tflops = 0;                 // 2 M N K / median time, 1e12 FLOP/s
  double flop_per_byte = 0;          // 2 M N K / (bytes of X, W and Y)
  std::int64_t weight_bytes = 0;     // N x K x element size
  double weight_gbps = 0;            // weight bytes / median time
  std::optional<double> peak_fraction;              // tflops / the measured square-GEMM peak of the dtype
  std::optional<double> memory_bandwidth_fraction;  // bytes of X, W, Y per median time / memory ceiling
  std::optional<RooflineBound> bound;               // null without both ceilings
  std::optional<GemmCheck> check;                   // null when not verified
  std::optional<MeasurementTelemetry> telemetry;    // GPU engines with the sampler running
};

// The compute ceiling of one dtype: a large square GEMM, beside the published peak when one is known.
struct ComputePeak {
  ComputeDtype dtype = ComputeDtype::f32;
  std::int64_t size = 0;  // M = N = K
  ComputeTiming timing;
  double measured_tflops = 0;
  std::optional<double> published_tflops;
  std::optional<std::string> published_basis;  // where the published number comes from, or why there is none
  std::optional<GemmCheck> check;
  std::optional<MeasurementTelemetry> telemetry;
};

// A streaming read of memory (host: DRAM through `threads` threads; GPU: device memory).
struct MemoryCeiling {
  std::string name;  // "dram_1_thread", "dram_all_threads", "device"
  std::optional<std::int64_t> threads;
  std::int64_t bytes = 0;
  ComputeTiming timing;
  double gbps = 0;
};

struct DtypeSupport {
  ComputeDtype dtype = ComputeDtype::f32;
  bool supported = false;
  std::optional<std::string> reason;  // why not, or how (e.g. "cblas_sbgemm, CPU has avx512_bf16")
  // The engine has no arithmetic in this dtype: weights are stored in it and decoded to f32 for the
  // multiply, as a CPU runs a bf16 or fp8 checkpoint. Measured only when asked for (absent before 2.4.0).
  bool weight_only = false;
};

struct ComputeEngineResult {
  ComputeEngineKind engine = ComputeEngineKind::host;
  EngineStatus status = EngineStatus::ok;
  std::optional<std::string> reason;
  std::optional<std::string> library;          // "OpenBLAS", "cuBLASLt"
  std::optional<std::string> library_version;
  std::optional<std::string> device;           // CPU model or GPU name
  std::optional<std::int64_t> threads;         // host engine
  std::optional<std::string> simulated;        // set when the vendor library is interprobe's simulator
  std::vector<DtypeSupport> dtypes;
  std::vector<MemoryCeiling> memory;
  std::optional<double> memory_ceiling_gbps;   // the fastest stream read: what the fractions divide by
  std::optional<double> launch_floor_us;       // GPU engines: an empty kernel's launch-to-completion time
  std::optional<std::string> launch_floor_reason;  // why it is null
  // GPU engines: per empty kernel when a chain of them replays from a captured CUDA graph (what
  // CUDA graphs leave of the launch cost); null with the reason in notes (absent before 2.3.0).
  std::optional<double> launch_floor_graph_us;
  std::vector<ComputePeak> peaks;
  std::vector<GemmPoint> points;
  std::vector<std::string> notes;
};

struct ComputeSection {
  ComputePlan plan = ComputePlan::quick;
  double target_cv_fraction = 0.02;
  std::vector<ComputeEngineResult> engines;
};

}  // namespace interprobe::report
