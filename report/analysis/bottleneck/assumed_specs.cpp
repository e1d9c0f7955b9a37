#include "report/analysis/bottleneck/assumed_specs.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace interprobe::bottleneck {

namespace {

// Dense peaks (no sparsity). Where a datasheet gives only the sparse figure it is halved, and
// the basis says so. The host launch cost is reference.md's ≈ 3 µs per eager kernel.
constexpr std::array<GpuSpec, 7> kSpecs{{
    {"h100-sxm", "NVIDIA H100 SXM5 80GB", 3350, 989.4, 1978.9, 0, 3, "NVIDIA H100 datasheet (SXM5)"},
    {"h200", "NVIDIA H200 SXM 141GB", 4800, 989.4, 1978.9, 0, 3, "NVIDIA H200 datasheet"},
    {"b200", "NVIDIA B200", 8000, 2250, 4500, 9000, 3, "NVIDIA B200 datasheet (HGX B200, per GPU)"},
    {"a100-sxm", "NVIDIA A100 SXM4 80GB", 2039, 312, 0, 0, 3, "NVIDIA A100 datasheet (80GB SXM)"},
    {"l40s", "NVIDIA L40S", 864, 362.05, 733, 0, 3, "NVIDIA L40S datasheet"},
    {"l4", "NVIDIA L4", 300, 121, 242.5, 0, 3, "NVIDIA L4 datasheet"},
    {"rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell (96 GB GDDR7)", 1792, 500, 1000, 2000, 3,
     "NVIDIA RTX PRO 6000 Blackwell datasheet: 1,792 GB/s; 4,000 FP4 TOPS with sparsity, halved for dense, FP8 and BF16 "
     "at 1/2 and 1/4 of it"},
}};

}  // namespace

const GpuSpec* find_gpu_spec(std::string_view key) {
  for (const auto& s : kSpecs)
    if (key == s.key) return &s;
  return nullptr;
}

std::string known_gpu_specs() {
  std::string out;
  for (const auto& s : kSpecs) out += (out.empty() ? "" : ", ") + std::string(s.key);
  return out;
}

double AssumedPrices::peak_tflops(workload::WeightDtype dtype) const {
  // A dtype without its own tensor cores runs at the next wider one's rate.
  switch (dtype) {
    case workload::WeightDtype::nvfp4:
      if (spec_.nvfp4_tflops > 0) return spec_.nvfp4_tflops;
      [[fallthrough]];
    case workload::WeightDtype::fp8:
      if (spec_.fp8_tflops > 0) return spec_.fp8_tflops;
      [[fallthrough]];
    case workload::WeightDtype::bf16: return spec_.bf16_tflops;
  }
  return spec_.bf16_tflops;
}

std::optional<Price> AssumedPrices::gemm(const workload::GemmOp& op) const {
  if (auto p = measured_.gemm(op)) return p;
  // One instance: its weights, its bf16 activations in and out.
  double bytes = static_cast<double>(op.n) * static_cast<double>(op.k) * workload::bytes_per_weight(op.dtype) +
                 2.0 * static_cast<double>(op.m) * static_cast<double>(op.k + op.n);
  double flops = 2.0 * static_cast<double>(op.m) * static_cast<double>(op.n) * static_cast<double>(op.k);
  double us = std::max(bytes / (spec_.memory_gbps * 1e9), flops / (peak_tflops(op.dtype) * 1e12)) * 1e6;
  return Price{us, Provenance::assumed};
}

std::optional<double> AssumedPrices::ridge_flop_per_byte(workload::WeightDtype dtype) const {
  if (auto r = measured_.ridge_flop_per_byte(dtype)) return r;
  return peak_tflops(dtype) * 1e12 / (spec_.memory_gbps * 1e9);
}

std::optional<Price> AssumedPrices::all_reduce(std::int64_t bytes, std::int64_t ranks) const {
  return measured_.all_reduce(bytes, ranks);
}

std::optional<double> AssumedPrices::all_reduce_floor_us(std::int64_t ranks) const {
  return measured_.all_reduce_floor_us(ranks);
}

std::optional<Price> AssumedPrices::stream_read(double bytes) const {
  if (auto p = measured_.stream_read(bytes)) return p;
  return Price{bytes / (spec_.memory_gbps * 1e9) * 1e6, Provenance::assumed};
}

std::optional<Price> AssumedPrices::launches(std::int64_t kernels) const {
  if (auto p = measured_.launches(kernels)) return p;
  return Price{spec_.launch_us * static_cast<double>(kernels), Provenance::assumed};
}

}  // namespace interprobe::bottleneck
