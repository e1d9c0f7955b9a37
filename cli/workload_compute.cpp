#include "cli/workload_compute.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "probes/compute/compute_probe.hpp"
#include "report/analysis/workload/decode_step.hpp"

namespace interprobe::cli {

namespace {

using report::ComputeDtype;

// The dtype an engine measures for weights stored as `d`; nvfp4 has no engine of its own, and
// the ranking prices it from fp8 (marked extrapolated).
ComputeDtype measured_dtype_of(workload::WeightDtype d) {
  switch (d) {
    case workload::WeightDtype::bf16: return ComputeDtype::bf16;
    case workload::WeightDtype::fp8:
    case workload::WeightDtype::nvfp4: return ComputeDtype::fp8_e4m3;
  }
  return ComputeDtype::bf16;
}

double weights_of(const ComputeShape& s) { return static_cast<double>(s.n) * static_cast<double>(s.k); }

class WorkloadComputeProbe final : public Probe {
 public:
  explicit WorkloadComputeProbe(std::shared_ptr<const PreparedWorkloads> workloads) : workloads_(std::move(workloads)) {}
  std::string name() const override { return "compute"; }
  void run(const ProbeContext& ctx, report::Report& report) override {
    make_compute_probe(workload_compute_request(*workloads_, report))->run(ctx, report);
  }

 private:
  std::shared_ptr<const PreparedWorkloads> workloads_;
};

}  // namespace

ComputeRequest workload_compute_request(const PreparedWorkloads& workloads, const report::Report& report) {
  ComputeRequest r = compute_plan(report::ComputePlan::quick);
  r.plan = report::ComputePlan::custom;
  r.shapes.clear();
  r.sweep.min_samples = 3;  // a large model's lm_head at batch 64 takes a second on a CPU
  // The example models' shapes took 89 s on 2 CPUs; a run prices GPUs, and what the CPUs leave
  // unmeasured is priced from their measured ceilings (and says so).
  r.host_points_limit_s = kRunHostGemmSeconds;
  std::set<std::int64_t> m_values{1};
  std::set<ComputeDtype> dtypes{ComputeDtype::f32};
  std::int64_t measured = measured_tp(report);
  for (const auto& w : workloads.requests) {
    std::int64_t tp = workloads.tp_given ? w.tp : measured;
    std::vector<workload::WeightShape> shapes;
    try {
      shapes = workload::weight_shapes(w.model, tp);
    } catch (const InputError&) {
      continue;  // the TP does not fit this model: rank_workloads says so in its verdict
    }
    m_values.insert(w.batches.begin(), w.batches.end());
    std::map<ComputeDtype, std::pair<ComputeShape, ComputeShape>> extremes;  // smallest, largest
    for (const auto& s : shapes) {
      ComputeDtype d = measured_dtype_of(s.dtype);
      ComputeShape shape{fmt::format("{}_tp{}", s.name, tp), s.n, s.k, d};
      auto [at, fresh] = extremes.try_emplace(d, shape, shape);
      if (fresh) continue;
      if (weights_of(shape) < weights_of(at->second.first)) at->second.first = shape;
      if (weights_of(shape) > weights_of(at->second.second)) at->second.second = shape;
    }
    for (const auto& [d, pair] : extremes) {
      dtypes.insert(d);
      for (const auto& s : {pair.first, pair.second}) {
        bool seen = std::any_of(r.shapes.begin(), r.shapes.end(),
                                [&](const ComputeShape& o) { return o.n == s.n && o.k == s.k && o.dtype == s.dtype; });
        if (!seen) r.shapes.push_back(s);
      }
    }
  }
  if (r.shapes.empty()) return compute_plan(report::ComputePlan::quick);  // no model fits: the plain plan
  r.m_values.assign(m_values.begin(), m_values.end());
  r.dtypes.assign(dtypes.begin(), dtypes.end());
  return r;
}

std::unique_ptr<Probe> make_workload_compute_probe(std::shared_ptr<const PreparedWorkloads> workloads) {
  return std::make_unique<WorkloadComputeProbe>(std::move(workloads));
}

}  // namespace interprobe::cli
