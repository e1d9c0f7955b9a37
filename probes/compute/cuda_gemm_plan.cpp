#include "probes/compute/cuda_gemm_plan.hpp"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/units.hpp"

namespace interprobe::cublaslt {

using report::ComputeDtype;

int data_type_of(ComputeDtype dtype) {
  switch (dtype) {
    case ComputeDtype::f32: return kR32F;
    case ComputeDtype::bf16: return kR16BF;
    case ComputeDtype::f16: return kR16F;
    case ComputeDtype::fp8_e4m3: return kR8FE4M3;
  }
  return kR32F;
}

int element_bytes_of(ComputeDtype dtype) {
  switch (dtype) {
    case ComputeDtype::f32: return 4;
    case ComputeDtype::bf16:
    case ComputeDtype::f16: return 2;
    case ComputeDtype::fp8_e4m3: return 1;
  }
  return 4;
}

namespace {

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

std::uint16_t to_bf16(float f) {
  std::uint32_t u = bits_of(f);
  if (std::isnan(f)) return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest even
  return static_cast<std::uint16_t>(u >> 16);
}

std::uint16_t to_f16(float f) {
  std::uint16_t sign = (bits_of(f) >> 16) & 0x8000;
  float a = std::fabs(f);
  if (std::isnan(f)) return 0x7e00;
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < std::ldexp(1.0f, -24)) return sign;
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exponent = std::max(e - 1, -14);
  // Mantissa units of 2^(exponent - 10); subnormals keep exponent -14.
  auto units = static_cast<std::uint32_t>(std::nearbyint(std::ldexp(a, 10 - exponent)));
  if (units >= 0x800) {  // rounding carried into the next binade
    units >>= 1;
    ++exponent;
  }
  std::uint16_t field = units < 0x400 ? 0 : static_cast<std::uint16_t>(exponent + 15);
  return static_cast<std::uint16_t>(sign | (field << 10) | (units & 0x3ff));
}

std::uint8_t to_e4m3(float f) {
  std::uint8_t sign = (bits_of(f) >> 24) & 0x80;
  float a = std::fabs(f);
  if (std::isnan(f)) return 0x7f;
  if (a >= 448.0f) return sign | 0x7e;  // saturate at the largest finite value
  if (a < std::ldexp(1.0f, -10)) return sign;
  int e;
  std::frexp(a, &e);
  int exponent = std::max(e - 1, -6);
  auto units = static_cast<std::uint32_t>(std::nearbyint(std::ldexp(a, 3 - exponent)));
  if (units >= 0x10) {
    units >>= 1;
    ++exponent;
  }
  std::uint8_t field = units < 0x8 ? 0 : static_cast<std::uint8_t>(exponent + 7);
  return static_cast<std::uint8_t>(sign | (field << 3) | (units & 0x7));
}

}  // namespace

std::vector<unsigned char> encode(ComputeDtype dtype, const std::vector<float>& values) {
  std::vector<unsigned char> out(values.size() * static_cast<std::size_t>(element_bytes_of(dtype)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    switch (dtype) {
      case ComputeDtype::f32: std::memcpy(&out[i * 4], &values[i], 4); break;
      case ComputeDtype::bf16: {
        std::uint16_t h = to_bf16(values[i]);
        std::memcpy(&out[i * 2], &h, 2);
        break;
      }
      case ComputeDtype::f16: {
        std::uint16_t h = to_f16(values[i]);
        std::memcpy(&out[i * 2], &h, 2);
        break;
      }
      case ComputeDtype::fp8_e4m3: out[i] = to_e4m3(values[i]); break;
    }
  }
  return out;
}

std::string ChosenAlgo::text() const {
  return fmt::format("algo {} (tile {}, stages {}, split-K {}), workspace {}, {:.2f} waves, first of {} offered", id, tile,
                     stages, split_k, format_bytes(workspace_bytes), waves, offered);
}

GemmPlan::GemmPlan(const Library& lib, Handle handle, const GemmShape& s, ComputeDtype dtype,
                   std::uint64_t max_workspace_bytes)
    : lib_(lib), handle_(handle), max_workspace_(max_workspace_bytes) {
  int type = data_type_of(dtype);
  auto n = static_cast<std::uint64_t>(s.n), m = static_cast<std::uint64_t>(s.m), k = static_cast<std::uint64_t>(s.k);
  try {
    lib.check(lib.matmul_desc_create(&desc_, kCompute32F, kR32F), "cublasLtMatmulDescCreate");
    std::int32_t t = kOpT, nt = kOpN;
    lib.check(lib.matmul_desc_set_attribute(desc_, kDescTransA, &t, sizeof t), "cublasLtMatmulDescSetAttribute(TRANSA)");
    lib.check(lib.matmul_desc_set_attribute(desc_, kDescTransB, &nt, sizeof nt), "cublasLtMatmulDescSetAttribute(TRANSB)");
    lib.check(lib.matrix_layout_create(&a_, type, k, n, s.k), "cublasLtMatrixLayoutCreate(W)");
    lib.check(lib.matrix_layout_create(&b_, type, k, m, s.k), "cublasLtMatrixLayoutCreate(X)");
    lib.check(lib.matrix_layout_create(&d_, kR32F, n, m, s.n), "cublasLtMatrixLayoutCreate(Y)");
    lib.check(lib.preference_create(&pref_), "cublasLtMatmulPreferenceCreate");
    lib.check(lib.preference_set_attribute(pref_, kPrefMaxWorkspaceBytes, &max_workspace_, sizeof max_workspace_),
              "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  } catch (...) {
    destroy();
    throw;
  }
}

GemmPlan::~GemmPlan() { destroy(); }

void GemmPlan::destroy() noexcept {
  if (pref_) (void)lib_.preference_destroy(pref_);
  if (d_) (void)lib_.matrix_layout_destroy(d_);
  if (b_) (void)lib_.matrix_layout_destroy(b_);
  if (a_) (void)lib_.matrix_layout_destroy(a_);
  if (desc_) (void)lib_.matmul_desc_destroy(desc_);
  pref_ = nullptr, d_ = b_ = a_ = nullptr, desc_ = nullptr;
}

bool GemmPlan::choose(Status& status) {
  constexpr int kAsk = 8;
  HeuristicResult results[kAsk] = {};
  int returned = 0;
  status = lib_.algo_get_heuristic(handle_, desc_, a_, b_, d_, d_, pref_, kAsk, results, &returned);
  if (status != kSuccess || returned <= 0 || results[0].state != kSuccess) {
    if (status == kSuccess) status = returned <= 0 ? kNotSupported : results[0].state;
    return false;
  }
  // The first result is the heuristic's best estimate: what cuBLAS itself would run.
  result_ = results[0];
  chosen_ = ChosenAlgo{};
  chosen_.offered = returned;
  chosen_.workspace_bytes = result_.workspace_size;
  chosen_.waves = result_.waves_count;
  std::size_t written = 0;
  (void)lib_.algo_config_get_attribute(&result_.algo, kAlgoConfigId, &chosen_.id, sizeof chosen_.id, &written);
  (void)lib_.algo_config_get_attribute(&result_.algo, kAlgoConfigTileId, &chosen_.tile, sizeof chosen_.tile, &written);
  (void)lib_.algo_config_get_attribute(&result_.algo, kAlgoConfigSplitkNum, &chosen_.split_k, sizeof chosen_.split_k,
                                       &written);
  (void)lib_.algo_config_get_attribute(&result_.algo, kAlgoConfigStagesId, &chosen_.stages, sizeof chosen_.stages,
                                       &written);
  return true;
}

void GemmPlan::run(const void* x, const void* w, void* y, void* workspace, std::uint64_t workspace_bytes,
                   cu::Stream stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  lib_.check(lib_.matmul(handle_, desc_, &alpha, w, a_, x, b_, &beta, y, d_, y, d_, &result_.algo, workspace,
                         workspace_bytes, stream),
             "cublasLtMatmul");
}

}  // namespace interprobe::cublaslt
