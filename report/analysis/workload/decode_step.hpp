#pragma once
// One decode step of a transformer under tensor parallelism, as operations on one TP rank (all
// ranks do the same work): the GEMMs with their shapes, the collectives with their message sizes,
// the KV-cache reads, and an estimate of the kernels launched. Pricing these from measured
// curves is the bottleneck ranking's job; this only counts.
#include <cstdint>
#include <string>
#include <vector>

#include "report/analysis/workload/model_config.hpp"

namespace interprobe::workload {

struct StepParams {
  std::int64_t tp = 1;
  std::int64_t batch = 1;              // sequences decoding together: tokens per step
  std::int64_t context_tokens = 4096;  // cached tokens each sequence attends to
  std::int64_t activation_bytes = 2;   // bf16 activations and KV cache
  // Experts spread whole over the TP ranks (EP = TP) instead of each expert split by TP.
  bool expert_parallel = false;
};

// Y[m×n] = X[m×k]·Wᵀ on one rank, `count` times per step (layers × experts touched; fractional
// for experts, whose expected number touched is fractional).
struct GemmOp {
  std::string name;  // "self_attn.qkv_proj", "mlp.experts.down_proj"
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  double count = 0;
  WeightDtype dtype = WeightDtype::bf16;
  // Kernel launches over all instances: `count` for a plain GEMM, one per MoE layer for a grouped
  // expert GEMM (every touched expert of the layer in one launch).
  double kernels = 0;

  bool grouped_experts() const { return name.find("experts.") != std::string::npos; }
  double weight_bytes() const;  // all instances
  double flops() const;         // all instances
};

enum class CollectiveKind { all_reduce, all_gather };

struct CollectiveOp {
  std::string name;
  CollectiveKind kind = CollectiveKind::all_reduce;
  std::int64_t bytes = 0;  // message size of one call (the whole gathered tensor for a gather)
  std::int64_t count = 0;  // calls per step
};

struct CacheReadOp {
  std::string name;
  double bytes = 0;  // per rank per step
};

struct DecodeStep {
  StepParams params;
  std::vector<GemmOp> gemms;
  std::vector<CollectiveOp> collectives;
  std::vector<CacheReadOp> cache_reads;
  double experts_touched_per_moe_layer = 0;  // MoE only: E·[1 − (1 − k/E)^t]
  // MoE only: expert GEMM instances one rank runs per layer (TP: every touched expert's slice; EP:
  // the busiest rank's whole experts).
  double expert_instances_per_moe_layer = 0;
  std::int64_t kernels_estimated = 0;        // launches per rank per step, an estimate (see .cpp)
  std::vector<std::string> notes;            // what the model leaves out

  double weight_bytes() const;
  double cache_bytes() const;
  double flops() const;
};

// Expected number of distinct experts t tokens touch when each picks top_k of `experts` uniformly.
double experts_touched(std::int64_t experts, std::int64_t top_k, std::int64_t tokens);

// Throws InputError when --tp does not divide the attention heads (or the KV heads either way).
DecodeStep decode_step(const ModelConfig& model, const StepParams& params);

// The distinct weight shapes of a step on one rank (name, n, k, dtype): what the compute probe
// sweeps M over for this model.
struct WeightShape {
  std::string name;
  std::int64_t n = 0;
  std::int64_t k = 0;
  WeightDtype dtype = WeightDtype::bf16;
};
// The expected number of touched experts on the busiest of `ranks` ranks holding experts/ranks
// whole experts each, `touched` experts touched in all (each expert independently): the rank an
// expert-parallel step waits for.
double busiest_rank_experts(std::int64_t experts, std::int64_t ranks, double touched);

std::vector<WeightShape> weight_shapes(const ModelConfig& model, std::int64_t tp);

}  // namespace interprobe::workload
