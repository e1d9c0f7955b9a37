#pragma once
// The seam between the compute sweep and whatever multiplies matrices (OpenBLAS on the host,
// cuBLASLt on a GPU). Like the copy engine of the bandwidth sweep: the sweep asks the engine to
// prepare a shape untimed, times batches of back-to-back GEMMs through it, and reads back sampled
// output elements once so that shared code checks them against a reference computed in double.
//
// Layout every engine honours (row-major; a column-major library swaps operands):
//   X: M x K, element (i, k) at i*K + k      W: N x K, element (j, k) at j*K + k
//   Y = X . W^T: M x N, element (i, j) at i*N + j, f32 (accumulated in f32 or wider)
// Inputs hold compute_pattern_value(operand, flat index) (probes/compute/pattern.hpp): values
// that every dtype here represents exactly, so the reference needs no knowledge of the dtype.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/compute.hpp"

namespace interprobe {

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
};

// One output element the check asks for.
struct OutputIndex {
  std::int64_t row = 0, col = 0;  // i in [0, M), j in [0, N)
};

// How the engine's clock wants to be driven, and the sizes of its ceilings.
struct ComputeTimingHints {
  double min_sample_us = 500;                 // batch short GEMMs until a sample lasts this long
  std::uint64_t max_ops_per_sample = 1u << 16;  // queue limits (CUDA streams) cap batches
  // M = N = K of the square GEMM that measures the peak: large enough to saturate the device,
  // small enough to finish in seconds (host 2048, a GPU 8192). A request may override it.
  std::int64_t peak_size = 4096;
  // Bytes of the streaming read: several times the last-level cache so it measures memory.
  std::uint64_t stream_bytes = 256ull << 20;
};

// A streaming read the engine offers as a memory ceiling ("dram_1_thread", threads 1).
struct StreamVariant {
  std::string name;
  std::optional<std::int64_t> threads;
};

// Identity of the engine for the report: engine, library, library_version, device, threads,
// simulated. The sweep fills status, dtypes, ceilings and points.
using ComputeEngineInfo = report::ComputeEngineResult;

class ComputeEngine {
 public:
  virtual ~ComputeEngine() = default;

  virtual ComputeEngineInfo describe() const = 0;
  virtual ComputeTimingHints timing() const { return {}; }

  // Whether `dtype` runs here; unsupported carries the reason (library lacks it, CPU lacks
  // avx512_bf16, GPU architecture lacks fp8 ...). Supported may carry how, as the reason.
  virtual report::DtypeSupport supports(report::ComputeDtype dtype) const = 0;
  // Bytes the engine may allocate for X, W and Y together; the sweep skips shapes above it.
  virtual std::uint64_t max_bytes() const = 0;

  // Untimed: buffers for `shape` in `dtype`, X and W filled with the pattern, Y overwritten with
  // a value no GEMM produces (so one that did not run cannot pass the check).
  virtual void prepare(const GemmShape& shape, report::ComputeDtype dtype) = 0;
  // Seconds for `count` back-to-back GEMMs of the prepared shape, timed by the engine
  // (host: a steady clock around the calls; GPU: events around the launches, synchronized).
  virtual double gemm_s(std::uint64_t count) = 0;
  // After at least one GEMM: Y at `indices`, as double, in the same order.
  virtual std::vector<double> read_outputs(const std::vector<OutputIndex>& indices) = 0;
  // Frees GEMM buffers; the engine may be prepared again afterwards.
  virtual void release() {}

  // Memory ceilings this engine can measure (empty: none).
  virtual std::vector<StreamVariant> stream_variants() const = 0;
  // Untimed: a buffer of `bytes` for variant `variant` (an index into stream_variants()).
  virtual void prepare_stream(std::size_t variant, std::uint64_t bytes) = 0;
  // Seconds for `passes` full reads of the prepared stream buffer.
  virtual double stream_read_s(std::uint64_t passes) = 0;
  virtual void release_stream() {}

  // Launch floor (GPU engines): nullopt = supported; otherwise why not.
  virtual std::optional<std::string> launch_floor_unsupported() const { return "not a GPU engine"; }
  // Seconds for `count` back-to-back empty kernel launches, completed.
  virtual double empty_launches_s(std::uint64_t count) { (void)count; return 0; }
  // Per empty kernel of a chain replayed from a captured CUDA graph, in seconds; nullopt when the
  // engine or driver has no graphs.
  virtual std::optional<double> graph_launch_s() { return std::nullopt; }

  // What the engine wants the report to keep beside its numbers (the algorithm a library chose
  // per GEMM, measurements that fit no field); appended to the engine's notes after the sweep.
  virtual std::vector<std::string> notes() const { return {}; }

  // The vendor's published dense peak for `dtype` on this device in TFLOP/s, and its basis;
  // {nullopt, why} when none is known.
  virtual std::pair<std::optional<double>, std::string> published_peak(report::ComputeDtype dtype) const {
    (void)dtype;
    return {std::nullopt, "no published peak known for this device"};
  }
};

}  // namespace interprobe
