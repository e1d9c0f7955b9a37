#include "probes/compute/weight_only_gemm.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace interprobe {

using report::ComputeDtype;

namespace {

// OCP FP8 E4M3 (the "FN" variant NVIDIA uses): bias 7, no infinities, S.1111.111 is NaN.
float decode_e4m3(std::uint8_t v) {
  int exponent = (v >> 3) & 0xf, mantissa = v & 0x7;
  float magnitude = exponent == 0xf && mantissa == 0x7 ? std::numeric_limits<float>::quiet_NaN()
                    : exponent == 0                    ? std::ldexp(static_cast<float>(mantissa), -9)
                                                       : std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
  return (v & 0x80) ? -magnitude : magnitude;
}

// A decoded block of this many f32 bytes stays in a core's L2 beside its slice of X.
constexpr std::int64_t kBlockBytes = 512 * 1024;

}  // namespace

bool weight_only_decodes(ComputeDtype dtype) { return dtype == ComputeDtype::bf16 || dtype == ComputeDtype::fp8_e4m3; }

void WeightOnlyGemm::set_weights(ComputeDtype dtype, std::vector<unsigned char> encoded, std::int64_t n, std::int64_t k,
                                 unsigned workers) {
  if (!weight_only_decodes(dtype)) throw std::logic_error("WeightOnlyGemm: only bf16 and fp8_e4m3 weights");
  dtype_ = dtype;
  weights_ = std::move(encoded);
  n_ = n;
  k_ = k;
  block_rows_ = std::clamp<std::int64_t>(kBlockBytes / (4 * std::max<std::int64_t>(1, k)), 1, 256);
  scratch_.assign(std::max(1u, workers), std::vector<float>(static_cast<std::size_t>(block_rows_ * k)));
  for (int v = 0; v < 256; ++v) e4m3_[v] = decode_e4m3(static_cast<std::uint8_t>(v));
}

void WeightOnlyGemm::clear() {
  std::vector<unsigned char>().swap(weights_);
  scratch_.clear();
  n_ = k_ = 0;
}

void WeightOnlyGemm::decode_rows(std::int64_t first_row, std::int64_t rows, float* out) const {
  auto count = static_cast<std::size_t>(rows * k_);
  if (dtype_ == ComputeDtype::bf16) {
    const auto* in = reinterpret_cast<const std::uint16_t*>(weights_.data()) + first_row * k_;
    for (std::size_t i = 0; i < count; ++i) {
      std::uint32_t bits = static_cast<std::uint32_t>(in[i]) << 16;  // bf16 is the top half of an f32
      std::memcpy(&out[i], &bits, sizeof bits);
    }
  } else {
    const unsigned char* in = weights_.data() + first_row * k_;
    for (std::size_t i = 0; i < count; ++i) out[i] = e4m3_[in[i]];
  }
}

void WeightOnlyGemm::run(ForkJoinPool& pool, const float* x, std::int64_t m, float* y) {
  if (pool.size() > scratch_.size()) throw std::logic_error("WeightOnlyGemm::run: more workers than set_weights was told");
  const std::int64_t n = n_, k = k_, workers = pool.size();
  pool.run([&](unsigned w) {
    std::int64_t begin = n * w / workers, end = n * (w + 1) / workers;
    float* block = scratch_[w].data();
    for (std::int64_t row = begin; row < end; row += block_rows_) {
      std::int64_t rows = std::min(block_rows_, end - row);
      decode_rows(row, rows, block);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(m), static_cast<blasint>(rows),
                  static_cast<blasint>(k), 1.0f, x, static_cast<blasint>(k), block, static_cast<blasint>(k), 0.0f, y + row,
                  static_cast<blasint>(n));
    }
  });
}

}  // namespace interprobe
