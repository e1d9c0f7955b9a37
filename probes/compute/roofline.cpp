#include "probes/compute/roofline.hpp"

#include <algorithm>

namespace interprobe {

std::int64_t dtype_bytes(report::ComputeDtype dtype) {
  using report::ComputeDtype;
  switch (dtype) {
    case ComputeDtype::f32: return 4;
    case ComputeDtype::bf16:
    case ComputeDtype::f16: return 2;
    case ComputeDtype::fp8_e4m3: return 1;
  }
  return 4;
}

double gemm_bytes(std::int64_t m, std::int64_t n, std::int64_t k, report::ComputeDtype dtype) {
  auto e = static_cast<double>(dtype_bytes(dtype));
  auto md = static_cast<double>(m), nd = static_cast<double>(n), kd = static_cast<double>(k);
  return (md * kd + nd * kd) * e + md * nd * 4.0;
}

double gemm_flop(std::int64_t m, std::int64_t n, std::int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

std::optional<report::RooflineBound> roofline_bound(const report::GemmPoint& p, const Ceilings& c) {
  if (!c.memory_gbps || !c.peak_tflops || !(*c.memory_gbps > 0) || !(*c.peak_tflops > 0)) return std::nullopt;
  double t_memory_us = gemm_bytes(p.m, p.n, p.k, p.dtype) / (*c.memory_gbps * 1e3);
  double t_compute_us = gemm_flop(p.m, p.n, p.k) / (*c.peak_tflops * 1e6);
  if (c.launch_floor_us && *c.launch_floor_us >= std::max(t_memory_us, t_compute_us))
    return report::RooflineBound::latency;
  return t_compute_us >= t_memory_us ? report::RooflineBound::compute : report::RooflineBound::memory;
}

void derive_point(report::GemmPoint& p, const Ceilings& c) {
  double seconds = p.timing.median_us * 1e-6;
  double flop = gemm_flop(p.m, p.n, p.k);
  double bytes = gemm_bytes(p.m, p.n, p.k, p.dtype);
  p.weight_bytes = p.n * p.k * dtype_bytes(p.dtype);
  p.flop_per_byte = bytes > 0 ? flop / bytes : 0;
  p.tflops = seconds > 0 ? flop / seconds / 1e12 : 0;
  p.weight_gbps = seconds > 0 ? static_cast<double>(p.weight_bytes) / seconds / 1e9 : 0;
  p.peak_fraction.reset();
  p.memory_bandwidth_fraction.reset();
  if (c.peak_tflops && *c.peak_tflops > 0) p.peak_fraction = p.tflops / *c.peak_tflops;
  if (c.memory_gbps && *c.memory_gbps > 0 && seconds > 0) p.memory_bandwidth_fraction = bytes / seconds / 1e9 / *c.memory_gbps;
  p.bound = roofline_bound(p, c);
}

}  // namespace interprobe
