#include "report/analysis/bottleneck/step_what_ifs.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "report/analysis/bottleneck/batch_parts.hpp"
#include "report/analysis/bottleneck/what_if_prices.hpp"
#include "report/analysis/workload/decode_step.hpp"

namespace interprobe::bottleneck {

using report::StepCategory;

namespace {

report::WhatIf what_if(std::string change, std::int64_t batch, std::optional<double> tokens_per_s, double base_tokens_per_s,
                       report::Provenance p, std::string note) {
  report::WhatIf wi{std::move(change), batch, tokens_per_s, std::nullopt, p, std::move(note)};
  if (tokens_per_s && base_tokens_per_s > 0) wi.gain_fraction = *tokens_per_s / base_tokens_per_s - 1;
  return wi;
}

}  // namespace

// Removing each of the two largest costs: an upper bound on what its lever can give.
void removal_what_ifs(const report::BatchEstimate& b, std::vector<report::WhatIf>& out) {
  if (!b.bottleneck) return;  // a partial step: removing a part of it says nothing
  std::vector<const report::CategoryTime*> priced;
  for (const auto& c : b.categories)
    if (c.time_us && *c.time_us > 0) priced.push_back(&c);
  std::sort(priced.begin(), priced.end(), [](auto* x, auto* y) { return *x->time_us > *y->time_us; });
  for (std::size_t i = 0; i < priced.size() && i < 2; ++i) {
    double rest = b.modeled_step_us - *priced[i]->time_us;
    if (rest <= 0) continue;
    std::string note = "upper bound: the step with this cost removed entirely";
    // Against what was seen, the same saving is a smaller share when the model explains less.
    if (b.observed_step_us && *b.observed_step_us > *priced[i]->time_us)
      note += fmt::format("; against the observed {:.1f} ms step: {:+.0f}%", *b.observed_step_us / 1e3,
                          100 * (*b.observed_step_us / (*b.observed_step_us - *priced[i]->time_us) - 1));
    out.push_back(what_if("without " + phrase(priced[i]->category), b.batch, static_cast<double>(b.batch) / (rest * 1e-6),
                          b.tokens_per_s, worst(b.provenance, priced[i]->provenance), std::move(note)));
  }
}

// Half the TP: fewer ranks per all-reduce and twice the weights per GPU; priced only from an
// all-reduce measured at that rank count, and only when the weights fit the GPU's memory.
void lower_tp_what_if(const report::Report& r, const WorkloadRequest& rq, const PriceSource& prices,
                      const report::BatchEstimate& b, std::vector<report::WhatIf>& out) {
  if (rq.tp < 2 || rq.tp % 2 != 0) return;
  std::int64_t tp = rq.tp / 2;
  std::string change = fmt::format("TP {}", tp);
  workload::DecodeStep step;
  try {
    step = workload::decode_step(rq.model, {tp, b.batch, rq.context_tokens, 2});
  } catch (const InputError& e) {
    out.push_back(what_if(change, b.batch, std::nullopt, b.tokens_per_s, report::Provenance::not_measured, e.what()));
    return;
  }
  // Every expert's weights at this TP: at a very large batch every expert is touched.
  double all_weights = workload::decode_step(rq.model, {tp, 1 << 20, 0, 2}).weight_bytes();
  std::optional<std::int64_t> gpu_memory;
  if (r.topology && !r.topology->gpus.empty()) gpu_memory = r.topology->gpus.front().memory_bytes;
  std::string memory = gpu_memory ? fmt::format("{:.0f} GB of weights per GPU against {:.0f} GB", all_weights / 1e9,
                                                static_cast<double>(*gpu_memory) / 1e9)
                                  : fmt::format("{:.0f} GB of weights per rank; no GPU memory in the report, not checked",
                                                all_weights / 1e9);
  if (gpu_memory && all_weights > 0.9 * static_cast<double>(*gpu_memory)) {
    out.push_back(what_if(change, b.batch, std::nullopt, b.tokens_per_s, report::Provenance::not_measured,
                          "does not fit: " + memory));
    return;
  }
  auto e = price_step(step, prices);
  if (!e.bottleneck) {
    out.push_back(what_if(change, b.batch, std::nullopt, b.tokens_per_s, report::Provenance::not_measured,
                          fmt::format("no all-reduce or GEMM measured for {} ranks (run `interprobe allreduce` on {} GPUs); {}",
                                      tp, tp, memory)));
    return;
  }
  out.push_back(what_if(change, b.batch, e.tokens_per_s, b.tokens_per_s, e.provenance,
                        fmt::format("per replica, 2 replicas on the same devices; {}", memory)));
}

// P2P on, where the measured all-reduces ran without it: the same step with all-reduces from
// published P2P-on numbers for this topology (assumed), everything else as priced.
void p2p_on_what_if(const report::Report& r, const WorkloadRequest& rq, const PriceSource& prices,
                    const report::BatchEstimate& b, std::vector<report::WhatIf>& out) {
  if (rq.tp < 2) return;
  auto missing = p2p_missing_reason(r);
  if (!missing) return;
  const std::string change = "P2P on";
  const PublishedP2pAllreduce* row = published_p2p_allreduce(r, rq.tp);
  if (!row) {
    out.push_back(what_if(change, b.batch, std::nullopt, b.tokens_per_s, report::Provenance::not_measured,
                          fmt::format("{}; no published P2P all-reduce for {} GPUs on this interconnect: measure "
                                      "`interprobe allreduce` where P2P works (bare metal, or the hypervisor's P2P "
                                      "clique injected) and `compare` the two reports",
                                      *missing, rq.tp)));
    return;
  }
  P2pOnPrices p2p(prices, *row);
  auto step = workload::decode_step(rq.model, {rq.tp, b.batch, rq.context_tokens, 2});
  auto e = price_step(step, p2p);
  if (!e.bottleneck) return;  // nothing else priced: the removal what-ifs say as much
  double before_us = communication_us(b);
  double after_us = communication_us(to_batch(step, e));
  std::string observed;
  if (b.observed_step_us)
    observed = fmt::format(", {:.0f}% of the observed {:.1f} ms step", (before_us - after_us) / *b.observed_step_us * 100,
                           *b.observed_step_us / 1e3);
  out.push_back(what_if(change, b.batch, e.tokens_per_s, b.tokens_per_s, e.provenance,
                        fmt::format("{}. All-reduces {:.2f} -> {:.2f} ms per step{}, assumed from {}", *missing,
                                    before_us / 1e3, after_us / 1e3, observed, row->basis)));
}

// CUDA graphs, where the engine measured launches both ways, or where an assumed target runs
// eager (`graphs=off`): the step's kernels at the graph's per-kernel cost. The model counts
// kernels, not the gaps between them, so this is the launch part of the lever only.
void cuda_graphs_what_if(const ReportPrices& measured, const std::optional<AssumedTarget>& target,
                         const WorkloadRequest& rq, const PriceSource& prices, const report::BatchEstimate& b,
                         std::vector<report::WhatIf>& out) {
  auto graph_us = measured.graph_launch_floor_us();
  Provenance graph_provenance = Provenance::measured;
  bool launches_assumed = category_provenance(b, StepCategory::launch_overhead) == report::Provenance::assumed;
  if (target && !target->cuda_graphs && (!graph_us || launches_assumed)) {
    graph_us = assumed_efficiency().kernel_graph_us;
    graph_provenance = Provenance::assumed;
  }
  double eager_us = category_us(b, StepCategory::launch_overhead);
  if (!graph_us || eager_us <= 0) return;
  GraphLaunchPrices graphs(prices, *graph_us, graph_provenance);
  auto step = workload::decode_step(rq.model, {rq.tp, b.batch, rq.context_tokens, 2});
  auto e = price_step(step, graphs);
  if (!e.bottleneck) return;
  double after_us = category_us(to_batch(step, e), StepCategory::launch_overhead);
  out.push_back(what_if("CUDA graphs", b.batch, e.tokens_per_s, b.tokens_per_s, e.provenance,
                        fmt::format("{} kernels at {:.2f} us each in a captured graph ({}): launches {:.2f} -> {:.2f} "
                                    "ms per step; the gaps between kernels are not modelled",
                                    b.counts.kernels_estimated, *graph_us, report::to_string(graph_provenance), eager_us / 1e3,
                                    after_us / 1e3)));
}

const std::vector<StepScenario>& step_scenarios() {
  static const std::vector<StepScenario> scenarios{
      {"without the largest costs", [](const WhatIfContext&, const report::BatchEstimate& b, std::vector<report::WhatIf>& out) {
         removal_what_ifs(b, out);
       }},
      {"half the TP", [](const WhatIfContext& c, const report::BatchEstimate& b, std::vector<report::WhatIf>& out) {
         lower_tp_what_if(c.report, c.request, c.prices, b, out);
       }},
      // On GPUs the report did not measure, its missing P2P says nothing about the target's.
      {"P2P on", [](const WhatIfContext& c, const report::BatchEstimate& b, std::vector<report::WhatIf>& out) {
         if (c.report_gpus_priced) p2p_on_what_if(c.report, c.request, c.prices, b, out);
       }},
      {"CUDA graphs", [](const WhatIfContext& c, const report::BatchEstimate& b, std::vector<report::WhatIf>& out) {
         cuda_graphs_what_if(c.measured, c.target, c.request, c.prices, b, out);
       }},
  };
  return scenarios;
}

}  // namespace interprobe::bottleneck
