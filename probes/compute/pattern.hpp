#pragma once
// The inputs every compute engine fills X and W with, and the check of sampled outputs against a
// reference computed in double from the same values.
//
// Values are multiples of 1/4 in [-1, 1]: exact in f32, bf16, f16 and fp8 e4m3, so an engine
// converts them to its dtype without loss, and their products (multiples of 1/16) sum exactly in
// f32 for K up to 2^20. Any error of an output therefore comes from the library (reduced-precision
// accumulation, a wrong operand, a GEMM that did not run), not from rounding the inputs.
#include <cstdint>
#include <vector>

#include "probes/compute/compute_engine.hpp"

namespace interprobe {

enum class GemmOperand { x, w };

constexpr float compute_pattern_value(GemmOperand operand, std::int64_t index) {
  // splitmix64 of (index, operand): neighbouring elements differ, so a shifted or transposed
  // operand does not sum to the same outputs.
  std::uint64_t z = static_cast<std::uint64_t>(index) * 2 + (operand == GemmOperand::w ? 1u : 0u);
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<float>(static_cast<int>(z % 9) - 4) * 0.25f;
}

// Largest relative error a GEMM of `dtype` may show on the pattern (relative to sum_k |x_k w_k|).
// Exact sums make f32 results exact; the bound leaves room for libraries that accumulate in
// lower precision (TF32 paths, fp16 accumulators on GPUs).
double gemm_tolerance(report::ComputeDtype dtype);

// The output elements a check reads: corners, the middle and a fixed pseudo-random spread.
std::vector<OutputIndex> check_indices(const GemmShape& shape, int count = 48);

// Y(i, j) computed in double from the pattern, and sum_k |x_ik w_jk| (the error's scale).
struct ReferenceValue {
  double value = 0, magnitude = 0;
};
ReferenceValue reference_output(const GemmShape& shape, OutputIndex index);

// After at least one GEMM of the prepared shape: reads the sampled outputs and compares them.
report::GemmCheck check_gemm(ComputeEngine& engine, const GemmShape& shape, report::ComputeDtype dtype);

}  // namespace interprobe
