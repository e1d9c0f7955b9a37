#pragma once
// Prices from a report: GEMMs and ceilings from its compute section (a GPU engine's when one
// ran, else the host engine's), all-reduces from its collective section (the default-variant,
// out-of-place sweep at the TP size; NCCL before MPI). Nothing here is assumed: what the report
// lacks has no price.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "report/analysis/bottleneck/step_pricing.hpp"
#include "model/report.hpp"

namespace interprobe::bottleneck {

class ReportPrices : public PriceSource {
 public:
  explicit ReportPrices(const report::Report& report);

  std::optional<Price> gemm(const workload::GemmOp& op) const override;
  std::optional<double> ridge_flop_per_byte(workload::WeightDtype dtype) const override;
  std::optional<Price> all_reduce(std::int64_t bytes, std::int64_t ranks) const override;
  std::optional<double> all_reduce_floor_us(std::int64_t ranks) const override;
  std::optional<Price> stream_read(double bytes) const override;
  std::optional<Price> launches(std::int64_t kernels) const override;
  // Per kernel replayed from a CUDA graph, when the engine measured it.
  std::optional<double> graph_launch_floor_us() const;

  // Whether a GPU compute engine of the report measured a device whose name contains `device`
  // ("H100"), and whether the report's GPUs are of that kind (its collectives ran on them).
  bool compute_measured_on(const std::string& device) const;
  bool gpus_are(const std::string& device) const;

  // Which measurements priced what, for the report ("compute: cuda engine, NVIDIA H200 ...").
  std::vector<std::string> sources() const;

 private:
  struct DtypeCurves {
    report::ComputeDtype dtype;
    std::map<std::pair<std::int64_t, std::int64_t>, MeasuredCurve> by_weight_shape;  // (n, k) → time_us over M
  };
  const DtypeCurves* curves_for(workload::WeightDtype dtype, double& time_scale, Provenance& provenance) const;
  const report::AllreduceSweep* sweep_at(std::int64_t ranks) const;

  const report::Report& report_;
  const report::ComputeEngineResult* engine_ = nullptr;
  std::vector<DtypeCurves> curves_;
};

}  // namespace interprobe::bottleneck
