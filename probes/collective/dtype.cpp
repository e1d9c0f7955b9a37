#include "probes/collective/dtype.hpp"

#include <bit>
#include <cstring>

namespace interprobe::collective {

std::optional<Dtype> dtype_from(std::string_view name) {
  if (name == "float" || name == "float32" || name == "fp32") return Dtype::float32;
  if (name == "half" || name == "float16" || name == "fp16") return Dtype::float16;
  if (name == "bfloat16" || name == "bf16") return Dtype::bfloat16;
  return std::nullopt;
}

std::size_t element_bytes(Dtype d) { return d == Dtype::float32 ? 4 : 2; }

std::uint32_t exact_integer_limit(Dtype d) {
  switch (d) {
    case Dtype::float32: return 1u << 24;
    case Dtype::float16: return 1u << 11;
    case Dtype::bfloat16: return 1u << 8;
  }
  return 1;
}

std::uint16_t float_to_half(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t exponent = (x >> 23) & 0xffu;
  std::uint32_t mantissa = x & 0x7fffffu;
  if (exponent == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0));
  int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    // Subnormal half (or zero): shift the implicit 1 in, round to nearest even.
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mantissa |= 0x800000u;
    const unsigned shift = static_cast<unsigned>(14 - e);
    std::uint32_t half_mantissa = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half_mantissa & 1u))) ++half_mantissa;
    return static_cast<std::uint16_t>(sign | half_mantissa);
  }
  std::uint32_t bits = sign | (static_cast<std::uint32_t>(e) << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (bits & 1u))) ++bits;  // may carry into the exponent: correct
  return static_cast<std::uint16_t>(bits);
}

float half_to_float(std::uint16_t bits) {
  const std::uint32_t sign = (bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  std::uint32_t mantissa = bits & 0x3ffu;
  std::uint32_t out;
  if (exponent == 0x1f) {
    out = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent == 0) {
    if (mantissa == 0) {
      out = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mantissa <<= 1;
      } while ((mantissa & 0x400u) == 0);
      out = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((mantissa & 0x3ffu) << 13);
    }
  } else {
    out = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(out);
}

std::uint16_t float_to_bfloat16(float value) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

float bfloat16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

void encode_element(Dtype d, float value, std::byte* out) {
  if (d == Dtype::float32) {
    std::memcpy(out, &value, 4);
    return;
  }
  const std::uint16_t bits = d == Dtype::float16 ? float_to_half(value) : float_to_bfloat16(value);
  std::memcpy(out, &bits, 2);
}

float decode_element(Dtype d, const std::byte* in) {
  if (d == Dtype::float32) {
    float value;
    std::memcpy(&value, in, 4);
    return value;
  }
  std::uint16_t bits;
  std::memcpy(&bits, in, 2);
  return d == Dtype::float16 ? half_to_float(bits) : bfloat16_to_float(bits);
}

}  // namespace interprobe::collective
