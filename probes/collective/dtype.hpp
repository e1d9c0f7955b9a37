#pragma once
// Element types of an all-reduce and their host-side encodings. half and bfloat16 are encoded
// here (no CUDA headers) so the MPI backend and the result check work on any host.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/collective.hpp"

namespace interprobe::collective {

// The report's vocabulary: to_string() gives "float", "half", "bfloat16" (the names nccl-tests prints).
using Dtype = report::Dtype;
using report::to_string;

std::optional<Dtype> dtype_from(std::string_view name);  // also accepts float32, fp32, float16, fp16, bf16
std::size_t element_bytes(Dtype d);
// Integers up to this magnitude are exact in the type: 2^(significand bits + 1).
std::uint32_t exact_integer_limit(Dtype d);

// Round-to-nearest-even encodings; NaN stays NaN, overflow becomes infinity.
std::uint16_t float_to_half(float value);
float half_to_float(std::uint16_t bits);
std::uint16_t float_to_bfloat16(float value);
float bfloat16_to_float(std::uint16_t bits);

// Writes `value` as one element of `d` at `out` (element_bytes(d) bytes).
void encode_element(Dtype d, float value, std::byte* out);
float decode_element(Dtype d, const std::byte* in);

}  // namespace interprobe::collective
