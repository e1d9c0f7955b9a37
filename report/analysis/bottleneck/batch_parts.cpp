#include "report/analysis/bottleneck/batch_parts.hpp"

#include <algorithm>

namespace interprobe::bottleneck {

using report::StepCategory;

report::BatchEstimate to_batch(const workload::DecodeStep& step, const StepEstimate& e) {
  report::BatchEstimate b;
  b.batch = e.batch;
  b.counts = {step.weight_bytes(), step.cache_bytes(), step.flops(), 0, 0, step.kernels_estimated, std::nullopt};
  for (const auto& c : step.collectives)
    if (c.kind == workload::CollectiveKind::all_reduce) {
      b.counts.all_reduces += c.count;
      b.counts.all_reduce_bytes = std::max(b.counts.all_reduce_bytes, c.bytes);
    }
  if (step.experts_touched_per_moe_layer > 0) b.counts.experts_touched = step.experts_touched_per_moe_layer;
  for (const auto& c : e.categories)
    b.categories.push_back({c.category, c.priced ? std::optional<double>(c.us) : std::nullopt, c.provenance});
  b.modeled_step_us = e.modeled_us;
  b.tokens_per_s = e.tokens_per_s;
  b.provenance = e.provenance;
  b.bottleneck = e.bottleneck;
  if (e.bottleneck && e.modeled_us > 0) b.bottleneck_fraction = e.categories[static_cast<std::size_t>(*e.bottleneck)].us / e.modeled_us;
  b.observed_step_us = e.observed_us;
  b.residual_us = e.residual_us;
  return b;
}

double category_us(const report::BatchEstimate& b, StepCategory c) {
  for (const auto& t : b.categories)
    if (t.category == c) return t.time_us.value_or(0);
  return 0;
}
double communication_us(const report::BatchEstimate& b) {
  return category_us(b, StepCategory::communication_latency) + category_us(b, StepCategory::communication_bandwidth);
}
double gemm_us(const report::BatchEstimate& b) {
  return category_us(b, StepCategory::gemm_memory_bound) + category_us(b, StepCategory::gemm_compute_bound);
}

report::Provenance category_provenance(const report::BatchEstimate& b, StepCategory c) {
  for (const auto& t : b.categories)
    if (t.category == c) return t.provenance;
  return report::Provenance::not_measured;
}

std::string phrase(StepCategory c) {
  switch (c) {
    case StepCategory::communication_latency: return "all-reduce latency";
    case StepCategory::communication_bandwidth: return "all-reduce bandwidth";
    case StepCategory::gemm_memory_bound: return "streaming the weights (memory-bound GEMMs)";
    case StepCategory::gemm_compute_bound: return "GEMM compute";
    case StepCategory::cache_reads: return "reading the KV cache";
    case StepCategory::launch_overhead: return "kernel launches";
  }
  return "?";
}

}  // namespace interprobe::bottleneck
