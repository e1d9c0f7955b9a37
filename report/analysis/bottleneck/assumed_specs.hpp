#pragma once
// Published GPU specifications, used only when the operator asks (`--assume gpu=NAME`) to price
// what the report did not measure. Every price drawn from here is `assumed`, never `measured`.
#include <optional>
#include <string>
#include <string_view>

#include "report/analysis/bottleneck/step_pricing.hpp"

namespace interprobe::bottleneck {

struct GpuSpec {
  const char* key;        // what --assume gpu= takes
  const char* name;       // the product
  double memory_gbps;     // device memory, datasheet
  double bf16_tflops;     // dense tensor-core peaks, datasheet boost clock
  double fp8_tflops;      // 0: no FP8 tensor cores
  double nvfp4_tflops;    // 0: no FP4 tensor cores
  double launch_us;       // one eager kernel launch on the host
  const char* basis;      // where the numbers come from
};

const GpuSpec* find_gpu_spec(std::string_view key);
std::string known_gpu_specs();  // "h100-sxm, h200, ..." for error messages

// Prices what `measured` cannot from a GpuSpec, at the roofline ("speed of light": the larger of
// bytes / bandwidth and FLOPs / peak), marked assumed. All-reduces have no published figure.
class AssumedPrices : public PriceSource {
 public:
  AssumedPrices(const PriceSource& measured, const GpuSpec& spec) : measured_(measured), spec_(spec) {}

  std::optional<Price> gemm(const workload::GemmOp& op) const override;
  std::optional<double> ridge_flop_per_byte(workload::WeightDtype dtype) const override;
  std::optional<Price> all_reduce(std::int64_t bytes, std::int64_t ranks) const override;
  std::optional<double> all_reduce_floor_us(std::int64_t ranks) const override;
  std::optional<Price> stream_read(double bytes) const override;
  std::optional<Price> launches(std::int64_t kernels) const override;

 private:
  double peak_tflops(workload::WeightDtype dtype) const;
  const PriceSource& measured_;
  const GpuSpec& spec_;
};

}  // namespace interprobe::bottleneck
