#pragma once
// The layout what-if of a MoE workload (`analyze`, issue 33): the parallel layouts this machine's
// GPUs allow — TP over all of them, attention TP with experts EP, attention data-parallel with
// experts EP, and TP x EP mixes for the experts — each with its memory per GPU (weights + KV
// cache at the batch, and whether that fits), the decode step's reads and communication, and the
// collectives it needs, priced from the report's curves (TP: all-reduce; EP: all-to-all dispatch
// and combine, DeepEP's bytes per token) or marked assumed / not priced.
#include <vector>

#include "report/analysis/bottleneck/analyze.hpp"
#include "report/analysis/bottleneck/step_pricing.hpp"
#include "model/report.hpp"

namespace interprobe::bottleneck {

// Bytes one token sends to one selected expert and gets back (DeepEP low-latency kernels):
// dispatch in FP8 with its scales, 16 + H + 4·H/128; combine in BF16, 2·H.
double ep_dispatch_bytes_per_copy(std::int64_t hidden);
double ep_combine_bytes_per_copy(std::int64_t hidden);

// The all-to-all time of `bytes` (nccl-tests' size: every peer's part together) over `ranks`, from
// the report's alltoall sweep at that rank count; without one, assumed at the all-reduce's bus
// bandwidth (an all-to-all of S moves the bus bytes of an all-reduce of S/2); else nullopt.
std::optional<Price> all_to_all_price(const report::Report& report, const PriceSource& prices, std::int64_t bytes,
                                      std::int64_t ranks);

// Every layout at every batch of the request; empty for a dense model. `gpus` is the machine's
// GPU count (the report's topology, else the request's TP).
std::vector<report::LayoutOption> layout_what_if(const report::Report& report, const WorkloadRequest& request,
                                                 const PriceSource& prices);

// The same with the prices analyze uses for these options (measured, or assumed with --assume).
std::vector<report::LayoutOption> layout_what_if(const report::Report& report, const WorkloadRequest& request,
                                                 const AnalyzeOptions& options);

}  // namespace interprobe::bottleneck
