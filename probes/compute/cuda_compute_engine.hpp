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
#include "probes/compute/gpu_datasheets.hpp"

namespace interprobe {

struct ProbeContext;
struct ComputeRequest;

// The engine on the first GPU in PCI bus order. Throws UnsupportedError with the reason when
// there is no driver, no GPU, or no cuBLASLt.
std::unique_ptr<ComputeEngine> make_cuda_compute_engine();
// The ComputeEngineFactory signature of compute_probe.hpp.
std::unique_ptr<ComputeEngine> make_cuda_compute_engine(const ProbeContext& ctx, const ComputeRequest& request);

}  // namespace interprobe
