#pragma once
// What the cuda compute engine takes from outside the measurement: the cuBLASLt workspace a
// framework gives its GEMMs, and each GPU's published tensor-core peak (a reference beside the
// measured one, never in its place).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "model/compute.hpp"

namespace interprobe {

// The cuBLASLt workspace PyTorch gives cuBLAS by default (aten/src/ATen/cuda/CublasHandlePool.cpp,
// CUBLAS_WORKSPACE_CONFIG unset): ":4096:8" = 32 MiB on compute capability 9.0 exactly (Hopper),
// ":4096:2:16:8" = 8 MiB + 128 KiB on every other GPU (Blackwell included).
std::uint64_t pytorch_workspace_bytes(int cc_major, int cc_minor);

// The dense (no sparsity) datasheet TFLOP/s of a GPU for bf16, f16 or fp8_e4m3 by its name,
// with the basis; {nullopt, why} for a GPU or dtype the table lacks.
std::pair<std::optional<double>, std::string> published_gpu_peak(const std::string& gpu_name,
                                                                  report::ComputeDtype dtype);

}  // namespace interprobe
