#pragma once
// A compute engine whose clock is a model: time = max(bytes / bandwidth, flop / peak) + launch
// floor, outputs computed from the pattern in double, and optionally corrupted. It lets the sweep,
// roofline and findings run deterministically and in microseconds.
#include <algorithm>
#include <cmath>

#include "probes/compute/compute_engine.hpp"
#include "probes/compute/pattern.hpp"
#include "probes/compute/roofline.hpp"

namespace interprobe::testing {

class ModelComputeEngine final : public ComputeEngine {
 public:
  double memory_gbps = 100, peak_tflops = 10;
  std::optional<double> launch_us;  // nullopt: no launch floor (like the host)
  bool corrupt_bf16 = false;        // wrong outputs for bf16 only
  double cache_speedup = 1;         // >1: GEMMs beat the stream read (weights "cached")
  int prepares = 0;

  ComputeEngineInfo describe() const override {
    ComputeEngineInfo info;
    info.library = "model";
    info.library_version = "1";
    return info;
  }
  ComputeTimingHints timing() const override {
    ComputeTimingHints h;
    h.min_sample_us = 0;  // one op per sample: the model has no clock granularity
    h.peak_size = 1024;
    h.stream_bytes = 1 << 20;
    return h;
  }
  report::DtypeSupport supports(report::ComputeDtype d) const override {
    report::DtypeSupport s;
    s.dtype = d;
    s.supported = d == report::ComputeDtype::f32 || d == report::ComputeDtype::bf16;
    if (!s.supported) s.reason = "the model runs f32 and bf16";
    return s;
  }
  std::uint64_t max_bytes() const override { return 1ull << 40; }
  void prepare(const GemmShape& shape, report::ComputeDtype dtype) override {
    shape_ = shape;
    dtype_ = dtype;
    ++prepares;
  }
  double gemm_s(std::uint64_t count) override {
    double t = std::max(gemm_bytes(shape_.m, shape_.n, shape_.k, dtype_) / (memory_gbps * cache_speedup * 1e9),
                        gemm_flop(shape_.m, shape_.n, shape_.k) / (peak_tflops * 1e12));
    return static_cast<double>(count) * (t + launch_us.value_or(0) * 1e-6);
  }
  std::vector<double> read_outputs(const std::vector<OutputIndex>& indices) override {
    std::vector<double> out;
    for (const auto& i : indices) {
      double v = reference_output(shape_, i).value;
      if (corrupt_bf16 && dtype_ == report::ComputeDtype::bf16) v += 0.5 + std::fabs(v) * 0.1;
      out.push_back(v);
    }
    return out;
  }
  std::vector<StreamVariant> stream_variants() const override { return {{"model", 1}}; }
  void prepare_stream(std::size_t, std::uint64_t bytes) override { stream_bytes_ = bytes; }
  double stream_read_s(std::uint64_t passes) override {
    return static_cast<double>(passes) * static_cast<double>(stream_bytes_) / (memory_gbps * 1e9);
  }
  std::optional<std::string> launch_floor_unsupported() const override {
    if (launch_us) return std::nullopt;
    return "the model has no launches";
  }
  double empty_launches_s(std::uint64_t count) override { return static_cast<double>(count) * *launch_us * 1e-6; }

 private:
  GemmShape shape_;
  report::ComputeDtype dtype_ = report::ComputeDtype::f32;
  std::uint64_t stream_bytes_ = 0;
};

}  // namespace interprobe::testing
