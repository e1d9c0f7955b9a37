#pragma once
// The `bottlenecks` section (issue 16): for each workload (a model, a TP size, batch sizes), the
// decode step priced from this report's measured curves and split into categories, the category
// whose removal gains the most tokens/s, and the verdict: the lever to pull, how sure, and what
// was not measured. Every number says how it was obtained.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/virt.hpp"  // Confidence
#include "model/vocabulary.hpp"

namespace interprobe::report {

// How a number was obtained, best first.
enum class Provenance { measured, interpolated, extrapolated, assumed, not_measured };
INTERPROBE_DECLARE_ENUM(Provenance);

enum class StepCategory {
  communication_latency,    // the all-reduces' fixed cost per call (the smallest size's time)
  communication_bandwidth,  // the rest of their time
  gemm_memory_bound,        // GEMMs below the measured ridge: streaming weights
  gemm_compute_bound,       // GEMMs at or above it
  cache_reads,              // KV cache (or MLA latent) read by attention
  launch_overhead,          // kernels launched × the measured launch floor
};
INTERPROBE_DECLARE_ENUM(StepCategory);

struct CategoryTime {
  StepCategory category = StepCategory::communication_latency;
  std::optional<double> time_us;  // null: not priced (see the workload's not_priced)
  Provenance provenance = Provenance::measured;
};

// What one step moves and computes on one rank (the workload model's counts, not measurements).
struct StepCounts {
  double weight_bytes = 0;
  double cache_bytes = 0;
  double flops = 0;
  std::int64_t all_reduces = 0;
  std::int64_t all_reduce_bytes = 0;  // message size of each
  std::int64_t kernels_estimated = 0;
  std::optional<double> experts_touched;  // per MoE layer, E·[1 − (1 − k/E)^t]
};

struct BatchEstimate {
  std::int64_t batch = 0;
  StepCounts counts;
  std::vector<CategoryTime> categories;
  double modeled_step_us = 0;  // sum of the priced categories
  double tokens_per_s = 0;     // batch / modeled step
  Provenance provenance = Provenance::measured;
  std::optional<StepCategory> bottleneck;  // null when GEMMs or communication are not priced
  std::optional<double> bottleneck_fraction;
  std::optional<double> observed_step_us;
  std::optional<double> residual_us;  // observed − modeled: what the model cannot explain
};

// A change and what the measured curves say it would give, at one batch.
struct WhatIf {
  std::string change;  // "without all-reduce latency", "TP 4"
  std::int64_t batch = 0;
  std::optional<double> tokens_per_s;  // null: cannot be priced (see note)
  std::optional<double> gain_fraction;  // tokens_per_s / the batch's modeled tokens/s − 1
  Provenance provenance = Provenance::measured;
  std::string note;
};

// A MoE model's parallel layouts on this machine's GPUs (analyze's layout what-if): each priced
// from the collective it needs (TP: all-reduce; EP: all-to-all dispatch + combine), on the
// report's measured curve where it has one and marked otherwise.
struct LayoutCollective {
  std::string purpose;          // "attention all-reduce", "MoE dispatch", "MoE combine", "expert all-reduce"
  std::string collective;       // all_reduce, alltoall (collective.sweeps' names)
  std::int64_t ranks = 0;
  std::int64_t bytes = 0;       // per call, nccl-tests' size column (alltoall: every peer's part together)
  std::int64_t calls = 0;       // per step
  std::optional<double> us;     // per call; null: not priced
  Provenance provenance = Provenance::not_measured;
};

struct LayoutOption {
  std::string name;  // "TP8", "attention DP8 + experts EP8", "attention TP8 + experts TP2xEP4"
  std::int64_t attention_tp = 1, attention_dp = 1, expert_tp = 1, expert_ep = 1;
  std::int64_t batch = 0;
  double weight_bytes_per_gpu = 0;
  double kv_bytes_per_gpu = 0;  // the KV cache at this batch and context
  std::optional<double> gpu_memory_bytes;
  std::optional<double> over_by_bytes;   // weights + KV past 90% of the GPU's memory; null: fits or unknown
  std::optional<double> memory_read_us;  // weights and KV one GPU reads per step
  std::optional<double> communication_us;
  std::optional<double> modeled_step_us;  // reads + communication (not overlapped)
  std::string limited_by;                 // "memory reads", "communication", "does not fit", "not priced"
  Provenance provenance = Provenance::not_measured;  // the worst of its parts
  std::vector<LayoutCollective> collectives;
};

struct WorkloadEstimate {
  std::string model;       // its name
  std::string model_type;  // config.json's
  std::string config;      // the file given
  std::string weight_dtype;
  std::int64_t tp = 1;
  std::int64_t context_tokens = 0;
  std::vector<BatchEstimate> batches;
  // The smallest power-of-two batch whose GEMMs take longer than its all-reduces (null: none up
  // to 4096, TP 1, or not priced).
  std::optional<std::int64_t> gemm_overtakes_communication_at_batch;
  std::vector<WhatIf> what_ifs;
  std::vector<std::string> not_priced;  // categories without a measured curve, and what measures them
  std::vector<std::string> notes;
  std::string verdict;                  // one sentence, first in every view
  std::optional<std::string> lever;
  Confidence confidence = Confidence::low;
  std::string confidence_reason;
  // What the telemetry classes (observe, run's baseline) say next to this ranking; null without them.
  std::optional<std::string> observed;
  std::vector<LayoutOption> layouts;  // MoE models only (analyze's layout what-if); absent before 2.6
};

struct BottleneckSection {
  std::vector<std::string> sources;  // which measurements priced the steps
  std::vector<WorkloadEstimate> workloads;
};

}  // namespace interprobe::report
