#pragma once
// The cuda compute engine: GEMMs through cuBLASLt (opened at run time), the memory ceiling and the
// launch floor through the driver API with the engine's own PTX kernels, all on one stream of one
// GPU's primary context and timed with CUDA events.
//
// Y[M x N] = X[M x K] . W^T runs as cuBLASLt's column-major D[N x M] = op(A) . B with A = W
// (K x N, transposed) and B = X (K x M): the "TN" layout FP8 requires, and what PyTorch's
// F.linear hands cuBLAS. C = D = f32, compute and scale f32.
#include <cstdint>
#include <memory>

#include "probes/compute/compute_engine.hpp"

namespace interprobe {

struct ProbeContext;
struct ComputeRequest;

// The cuBLASLt workspace PyTorch gives cuBLAS by default (aten/src/ATen/cuda/CublasHandlePool.cpp,
// CUBLAS_WORKSPACE_CONFIG unset): ":4096:8" = 32 MiB on compute capability 9.0 exactly (Hopper),
// ":4096:2:16:8" = 8 MiB + 128 KiB on every other GPU (Blackwell included).
std::uint64_t pytorch_workspace_bytes(int cc_major, int cc_minor);

// The dense (no sparsity) datasheet TFLOP/s of a GPU for bf16, f16 or fp8_e4m3 by its name,
// with the basis; {nullopt, why} for a GPU or dtype the table lacks.
std::pair<std::optional<double>, std::string> published_gpu_peak(const std::string& gpu_name,
                                                                  report::ComputeDtype dtype);

// The engine on the first GPU in PCI bus order. Throws UnsupportedError with the reason when
// there is no driver, no GPU, or no cuBLASLt.
std::unique_ptr<ComputeEngine> make_cuda_compute_engine();
// The ComputeEngineFactory signature of compute_probe.hpp.
std::unique_ptr<ComputeEngine> make_cuda_compute_engine(const ProbeContext& ctx, const ComputeRequest& request);

}  // namespace interprobe
