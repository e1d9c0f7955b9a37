#pragma once
// Derived numbers of a GEMM point and the roofline rule that names what bounds it.
//
// The rule, from the engine's measured ceilings (not published ones):
//   t_memory  = bytes of X, W and Y / memory_ceiling_gbps      (the fastest streaming read)
//   t_compute = 2 M N K / measured square-GEMM peak of the dtype
//   latency  when the engine has a launch floor and it is at least max(t_memory, t_compute):
//            the fixed cost of issuing the GEMM exceeds what moving or computing it costs;
//   compute  when t_compute >= t_memory (arithmetic intensity at or above the ridge point
//            peak / bandwidth);
//   memory   otherwise.
// Without either ceiling the bound is null: a guess from published peaks is not a measurement.
#include <cstdint>
#include <optional>

#include "model/compute.hpp"

namespace interprobe {

std::int64_t dtype_bytes(report::ComputeDtype dtype);

// Bytes a GEMM must move at least once: X (M x K) and W (N x K) in the dtype, Y (M x N) in f32.
double gemm_bytes(std::int64_t m, std::int64_t n, std::int64_t k, report::ComputeDtype dtype);
double gemm_flop(std::int64_t m, std::int64_t n, std::int64_t k);

struct Ceilings {
  std::optional<double> memory_gbps;
  std::optional<double> peak_tflops;     // of the point's dtype
  std::optional<double> launch_floor_us;
};

std::optional<report::RooflineBound> roofline_bound(const report::GemmPoint& point, const Ceilings& ceilings);

// Fills tflops, flop_per_byte, weight_bytes, weight_gbps, the fractions and the bound of a point
// whose shape, dtype and timing are set.
void derive_point(report::GemmPoint& point, const Ceilings& ceilings);

}  // namespace interprobe
