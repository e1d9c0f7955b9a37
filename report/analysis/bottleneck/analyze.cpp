#include "report/analysis/bottleneck/analyze.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/errors.hpp"
#include "common/units.hpp"
#include "report/analysis/bottleneck/assumed_specs.hpp"
#include "report/analysis/bottleneck/batch_parts.hpp"
#include "report/analysis/bottleneck/what_if_prices.hpp"
#include "report/analysis/bottleneck/report_prices.hpp"
#include "report/analysis/bottleneck/step_pricing.hpp"
#include "report/analysis/bottleneck/step_what_ifs.hpp"
#include "report/analysis/workload/decode_step.hpp"

namespace interprobe::bottleneck {

namespace {

// EP's price is the busiest rank's: say how much above the mean that is at the first batch.
std::string expert_parallel_note(const WorkloadRequest& rq) {
  auto step = workload::decode_step(rq.model, {rq.tp, rq.batches.front(), rq.context_tokens, 2, true});
  double mean = step.experts_touched_per_moe_layer / static_cast<double>(rq.tp);
  return fmt::format("experts by expert parallelism over {} ranks (--ep): at batch {} the busiest rank runs {:.1f} whole "
                     "experts per MoE layer against a mean of {:.1f} (routing taken as independent and uniform; a "
                     "load balancer such as EPLB narrows the gap), and the step waits for it",
                     rq.tp, rq.batches.front(), step.expert_instances_per_moe_layer, mean);
}

using report::StepCategory;

// Above this share of an observed step left unexplained, the model cannot say what limits it.
constexpr double kUnexplainedLimit = 0.5;
constexpr double kHighConfidenceResidual = 0.25;

// A measured part "leading" parts that are only assumed is a comparison of unlike numbers: say so.
bool lead_is_measured_among_assumed(const report::BatchEstimate& b, StepCategory top) {
  if (category_provenance(b, top) == report::Provenance::assumed) return false;
  return std::any_of(b.categories.begin(), b.categories.end(), [&](const report::CategoryTime& t) {
    return t.category != top && t.time_us && *t.time_us > 0 && t.provenance == report::Provenance::assumed;
  });
}

bool p2p_missing(const report::Report& r) {
  if (r.bandwidth)
    for (const auto& p : r.bandwidth->p2p_pairs)
      if (p.truth != report::P2pTruth::p2p) return true;
  if (r.topology)
    for (const auto& p : r.topology->gpu_pairs)
      if (p.p2p && p.p2p->read && *p.p2p->read != report::P2pCapability::ok) return true;
  return false;
}

// `target_p2p_missing`: P2P is off on the GPUs priced (the report's own; never an assumed NVSwitch
// system's, whatever the report's machine lacks).
std::string lever_for(StepCategory c, bool target_p2p_missing, const report::BatchEstimate& b,
                      const report::BatchEstimate& largest) {
  switch (c) {
    case StepCategory::communication_latency:
      if (target_p2p_missing)
        return "enable GPU peer-to-peer (a VM: one P2P clique id on every GPU, x-nv-gpudirect-clique=N; bare metal: "
               "ACS/IOMMU), which NCCL's low-latency all-reduce needs; or a lower TP (fewer ranks per all-reduce)";
      return fmt::format("fewer or cheaper all-reduces: a lower TP, or all-reduces captured in CUDA graphs; each of the "
                         "{} per step costs at least the measured floor", b.counts.all_reduces);
    case StepCategory::communication_bandwidth:
      return "more link bandwidth between the GPUs (P2P, NVLink), or a lower TP / expert parallelism to shrink the messages";
    case StepCategory::gemm_memory_bound:
      if (largest.batch == b.batch)  // one batch priced: nothing to compare it with
        return fmt::format("a larger batch: the weights are read once per step however many tokens share it (only "
                           "batch {} was priced; give --batch {},{} to see the modeled gain)",
                           b.batch, b.batch, 8 * b.batch);
      return fmt::format("a larger batch: the weights are read once per step however many tokens share it (modeled: "
                         "{} tokens/s at batch {} against {} at {})",
                         format_significant(largest.tokens_per_s), largest.batch, format_significant(b.tokens_per_s), b.batch);
    case StepCategory::gemm_compute_bound: return "lower-precision math (fp8, nvfp4) or more GPUs";
    case StepCategory::cache_reads: return "a shorter context or a quantized KV cache";
    case StepCategory::launch_overhead: return "CUDA graphs: the launches are a per-step cost, not a per-token one";
  }
  return "";
}

// The smallest power-of-two batch at which the GEMMs take longer than the all-reduces.
std::optional<std::int64_t> gemm_overtakes(const workload::ModelConfig& model, const WorkloadRequest& rq,
                                           const PriceSource& prices) {
  for (std::int64_t batch = 1; batch <= 4096; batch *= 2) {
    workload::StepParams p{rq.tp, batch, rq.context_tokens, 2, rq.expert_parallel};
    auto step = workload::decode_step(model, p);
    auto b = to_batch(step, price_step(step, prices));
    if (!b.categories[0].time_us || !b.categories[2].time_us) return std::nullopt;
    if (gemm_us(b) > communication_us(b)) return batch;
  }
  return std::nullopt;
}

// An observation judges the batch it was made at; the worst-explained one decides.
const report::BatchEstimate* worst_explained(const report::WorkloadEstimate& w) {
  const report::BatchEstimate* observed = nullptr;
  auto unexplained = [](const report::BatchEstimate& b) { return *b.residual_us / *b.observed_step_us; };
  for (const auto& b : w.batches)
    if (b.observed_step_us && b.residual_us && (!observed || unexplained(b) > unexplained(*observed))) observed = &b;
  return observed;
}

// Why batching helps whatever the bottleneck: the step's fixed costs are shared by the batch.
std::string batching_note(const report::WorkloadEstimate& w) {
  std::string curve, seen;
  for (const auto& b : w.batches) {
    curve += fmt::format("{}{} at batch {}", curve.empty() ? "" : ", ", format_significant(b.tokens_per_s), b.batch);
    if (b.observed_step_us)
      seen += fmt::format("{}{} at {}", seen.empty() ? "" : ", ",
                          format_significant(static_cast<double>(b.batch) / (*b.observed_step_us * 1e-6)), b.batch);
  }
  return fmt::format("batching raises tokens/s whatever limits the step: the all-reduces' latency, the launches and "
                     "the weights read are paid once per step and shared by the batch; modeled tokens/s {}{}",
                     curve, seen.empty() ? "" : "; observed " + seen);
}

// What the numbers are made of, and how much of reality they account for.
void set_confidence(report::WorkloadEstimate& w, const report::BatchEstimate& judged, bool observed, double unexplained,
                    bool host_prices_for_gpus) {
  report::Provenance worst_part = judged.provenance;
  bool all_priced = std::all_of(judged.categories.begin(), judged.categories.end(),
                                [](const report::CategoryTime& c) { return c.time_us.has_value(); });
  auto set = [&](report::Confidence c, std::string why) {
    w.confidence = c;
    w.confidence_reason = std::move(why);
  };
  std::string unexplained_text = fmt::format("{:.0f}% of the observed step is unexplained", 100 * unexplained);
  if (host_prices_for_gpus)
    set(report::Confidence::low, "GEMMs and memory were priced by the host CPU engine while this machine has GPUs");
  else if (observed && unexplained > kUnexplainedLimit) set(report::Confidence::low, unexplained_text);
  else if (worst_part == report::Provenance::assumed)
    set(report::Confidence::low, "parts are priced from published specs (assumed), not measured here");
  else if (!all_priced) set(report::Confidence::medium, "some categories have no price (see not priced)");
  else if (worst_part == report::Provenance::extrapolated)
    set(report::Confidence::medium, "parts are extrapolated (outside the measured range, or another dtype standing in)");
  else if (observed && unexplained > kHighConfidenceResidual) set(report::Confidence::medium, unexplained_text);
  else if (observed)
    set(report::Confidence::high, fmt::format("every part measured or interpolated; the model explains {:.0f}% of the "
                                              "observed step", 100 * (1 - unexplained)));
  else set(report::Confidence::high, "every part measured or interpolated (no observed speed given to check against)");
}

void judge(report::WorkloadEstimate& w, bool target_p2p_missing, bool host_prices_for_gpus) {
  const report::BatchEstimate* observed = worst_explained(w);
  const report::BatchEstimate& judged = observed ? *observed : w.batches.front();
  const report::BatchEstimate& largest = w.batches.back();
  std::string who = fmt::format("{} at TP {}", w.model, w.tp);
  if (!judged.bottleneck) {
    w.verdict = fmt::format("{}: cannot rank communication against compute: not measured: {}", who,
                            w.not_priced.empty() ? "see notes" : fmt::format("{}", fmt::join(w.not_priced, "; ")));
    w.lever = "measure on this machine: `interprobe run` (or `interprobe compute` and `interprobe allreduce`), or "
              "price from published specs with `analyze --assume gpu=NAME` (marked assumed)";
    w.confidence = report::Confidence::low;
    w.confidence_reason = "the categories that decide the ranking were not measured";
    return;
  }
  StepCategory top = *judged.bottleneck;
  w.verdict = fmt::format("{}: at batch {} {} is {:.0f}% of a modeled {} ms step ({} tokens/s)", who, judged.batch,
                          phrase(top), 100 * judged.bottleneck_fraction.value_or(0),
                          format_significant(judged.modeled_step_us / 1e3), format_significant(judged.tokens_per_s));
  if (largest.bottleneck && &largest != &judged)
    w.verdict += fmt::format("; at batch {}: {} ({:.0f}%)", largest.batch, phrase(*largest.bottleneck),
                             100 * largest.bottleneck_fraction.value_or(0));
  w.lever = lever_for(top, target_p2p_missing, judged, largest);
  double unexplained = observed ? *observed->residual_us / *observed->observed_step_us : 0;
  // The observed step beside the modeled one, whichever way the residual goes.
  if (observed && unexplained <= kUnexplainedLimit)
    w.verdict += unexplained >= 0
                     ? fmt::format("; observed {:.1f} ms at batch {}: the model explains {:.0f}% of it, {:.1f} ms unexplained",
                                   *observed->observed_step_us / 1e3, observed->batch, 100 * (1 - unexplained),
                                   *observed->residual_us / 1e3)
                     : fmt::format("; observed {:.1f} ms at batch {}: the model is {:.0f}% slower", *observed->observed_step_us / 1e3,
                                   observed->batch, -100 * unexplained);
  if (observed && unexplained > kUnexplainedLimit) {
    w.verdict = fmt::format("{}: the model explains {:.0f}% of the observed {:.1f} ms step at batch {}; {:.1f} ms is "
                            "unexplained, so what limits it is not established. Of what is explained, {} leads ({:.3g} ms, "
                            "{}{})",
                            who, 100 * (1 - unexplained), *observed->observed_step_us / 1e3, observed->batch,
                            *observed->residual_us / 1e3, phrase(top), category_us(*observed, top) / 1e3,
                            report::to_string(category_provenance(*observed, top)),
                            lead_is_measured_among_assumed(*observed, top) ? "; parts it leads are only assumed" : "");
    w.lever = "measure what the model leaves out before changing the machine: all-reduce latency in a dependent chain "
              "with compute between calls, SM activity during decode, skew between ranks; batching helps meanwhile";
    w.notes.push_back("GPU utilization (NVML) counts any running kernel, NCCL's busy-wait kernels included: \"100% "
                      "utilization\" at partial power cannot tell compute from waiting, so the unexplained time cannot be "
                      "called compute-bound from those counters");
    w.notes.push_back("measurements that would decide it: all-reduces timed in a dependent chain with GEMMs between them "
                      "(the sweep times back-to-back calls), SM and tensor activity during decode (NVML GPM), the skew "
                      "between ranks at each all-reduce (a late rank makes every other wait)");
  }
  if (w.batches.size() > 1 && w.tp > 1) w.notes.push_back(batching_note(w));
  set_confidence(w, judged, observed != nullptr, unexplained, host_prices_for_gpus);
}

// Every workload: do all the weights one rank holds fit its GPU? (At a very large batch every
// expert is touched, so that step's weight bytes are all of them.) The GPU's memory comes from
// the report's GPUs, else from the assumed GPU's datasheet.
void check_memory_fit(const report::Report& r, const WorkloadRequest& rq, const GpuSpec* assumed_gpu,
                      report::WorkloadEstimate& w) {
  double weights = workload::decode_step(rq.model, {rq.tp, 1 << 20, 0, 2, rq.expert_parallel}).weight_bytes();
  std::optional<double> memory;
  std::string whose;
  if (r.topology && !r.topology->gpus.empty() && r.topology->gpus.front().memory_bytes) {
    memory = static_cast<double>(*r.topology->gpus.front().memory_bytes);
    whose = "the report's GPU";
  } else if (assumed_gpu) {
    memory = assumed_gpu->memory_gb * 1e9;
    whose = fmt::format("the {} datasheet (assumed)", assumed_gpu->name);
  } else if ((!r.topology || r.topology->gpus.empty()) && r.system && r.system->memory_bytes) {
    memory = static_cast<double>(*r.system->memory_bytes);  // no GPU: the CPU would hold the weights
    whose = "this host's memory: no GPU here";
  }
  if (!memory) {
    w.notes.push_back(fmt::format("memory fit not checked: {:.1f} GB of weights per rank at TP {}, and no GPU memory "
                                  "in the report (give --assume gpu=NAME)",
                                  weights / 1e9, rq.tp));
    return;
  }
  // What an engine leaves for activations, CUDA graphs and the KV cache: vLLM's default
  // --gpu-memory-utilization is 0.9 of the device.
  bool fits = weights <= 0.9 * *memory;
  std::string line = fmt::format("memory: {:.1f} GB of weights per rank at TP {} against {:.0f} GB ({}): {}", weights / 1e9,
                                 rq.tp, *memory / 1e9, whose,
                                 fits ? "fits, the rest holds the KV cache" : "does not fit in 90% of it");
  w.notes.push_back(line);
  if (fits) return;
  w.verdict = fmt::format("{} at TP {} does not fit: {}. Priced anyway: {}", w.model, w.tp, line, w.verdict);
  w.confidence = report::Confidence::low;
  w.confidence_reason = "the weights do not fit the memory at this TP: the step as priced cannot run";
}

// The closed loop: each assumed or unexplained part names the interprobe command that measures it
// on the serving machine; `analyze` on the merged report then prices it from the measurement.
void name_the_measurements(const WorkloadRequest& rq, report::WorkloadEstimate& w) {
  bool assumed_compute = false, assumed_comm = false, unexplained = false;
  for (const auto& b : w.batches) {
    for (const auto& c : b.categories) {
      if (c.provenance != report::Provenance::assumed) continue;
      bool comm = c.category == StepCategory::communication_latency || c.category == StepCategory::communication_bandwidth;
      (comm ? assumed_comm : assumed_compute) = true;
    }
    unexplained = unexplained || (b.residual_us && b.observed_step_us && *b.residual_us > 0.25 * *b.observed_step_us);
  }
  std::vector<std::string> commands;
  if (assumed_compute)
    commands.push_back(fmt::format("`interprobe compute --engine cuda --model {} --tp {} -o c.json` (GEMMs at this "
                                   "model's shapes, memory bandwidth, launch floors eager and in a graph)",
                                   rq.config.empty() ? "CONFIG" : rq.config, rq.tp));
  if (assumed_comm && rq.tp > 1)
    commands.push_back(fmt::format("`interprobe allreduce -o a.json` on the {} GPUs (the all-reduce curve at TP {})",
                                   rq.tp, rq.tp));
  if (unexplained)
    commands.push_back("`interprobe observe --duration 60s -o o.json` while serving (power, SM activity and "
                       "utilization per window, tied to this step)");
  if (commands.empty()) return;
  w.notes.push_back(fmt::format("to measure what is assumed or unexplained here, on the serving machine: {}; then "
                                "`interprobe analyze` the report holding them",
                                fmt::join(commands, "; ")));
}

}  // namespace

report::WorkloadEstimate describe_workload(const WorkloadRequest& rq) {
  report::WorkloadEstimate w;
  w.model = rq.model.name;
  w.model_type = rq.model.model_type;
  w.config = rq.config;
  w.weight_dtype = workload::to_string(rq.model.quantization.dtype);
  w.tp = rq.tp;
  w.context_tokens = rq.context_tokens;
  return w;
}

report::WorkloadEstimate estimate_workload(const report::Report& report, const WorkloadRequest& rq,
                                           const AnalyzeOptions& options) {
  ReportPrices measured(report);
  std::unique_ptr<AssumedPrices> assumed = options.assume ? assumed_prices(measured, *options.assume) : nullptr;
  const PriceSource& prices = assumed ? static_cast<const PriceSource&>(*assumed) : measured;
  std::optional<AssumedTarget> target;
  if (options.assume) target = parse_assume(*options.assume);
  const GpuSpec* assumed_gpu = target ? target->gpu : nullptr;
  // The GPUs priced are the report's own unless --assume names another kind.
  bool report_gpus_priced = !assumed_gpu || measured.gpus_are(assumed_gpu->device_match);

  report::WorkloadEstimate w = describe_workload(rq);
  std::vector<std::int64_t> batches = rq.batches;
  for (const auto& o : rq.observed) batches.push_back(o.concurrency);
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  for (std::int64_t batch : batches) {
    workload::StepParams p{rq.tp, batch, rq.context_tokens, 2, rq.expert_parallel};
    auto step = workload::decode_step(rq.model, p);
    std::optional<double> observed;
    for (const auto& o : rq.observed)
      if (o.concurrency == batch) observed = o.step_us;
    auto e = price_step(step, prices, observed);
    for (const auto& reason : e.not_priced)
      if (std::find(w.not_priced.begin(), w.not_priced.end(), reason) == w.not_priced.end()) w.not_priced.push_back(reason);
    if (w.notes.empty())
      for (const auto& n : step.notes) w.notes.push_back(n);
    w.batches.push_back(to_batch(step, e));
  }
  w.gemm_overtakes_communication_at_batch = rq.tp > 1 ? gemm_overtakes(rq.model, rq, prices) : std::nullopt;
  // Every scenario on the smallest and the largest batch (the same one when only one was priced).
  const WhatIfContext context{report, rq, prices, measured, target, report_gpus_priced};
  for (const report::BatchEstimate* b : {&w.batches.front(), &w.batches.back()}) {
    if (b == &w.batches.back() && w.batches.size() == 1 && !w.what_ifs.empty()) break;
    for (const auto& scenario : step_scenarios()) scenario.apply(context, *b, w.what_ifs);
  }
  if (rq.tp == 1) w.notes.push_back("TP 1: no all-reduces; run under `mpirun -np N` or on N GPUs to rank communication");
  if (rq.expert_parallel) w.notes.push_back(expert_parallel_note(rq));
  bool gpus = report.topology && !report.topology->gpus.empty();
  bool host_priced = report.compute && std::none_of(report.compute->engines.begin(), report.compute->engines.end(),
                                                    [](const report::ComputeEngineResult& e) {
                                                      return e.engine == report::ComputeEngineKind::cuda && !e.points.empty();
                                                    }) &&
                     std::any_of(report.compute->engines.begin(), report.compute->engines.end(),
                                 [](const report::ComputeEngineResult& e) { return !e.points.empty(); });
  judge(w, report_gpus_priced && p2p_missing(report), gpus && host_priced);
  if (target && !target->cuda_graphs) {
    const auto& e = assumed_efficiency();
    double moved_ms = static_cast<double>(w.batches.front().counts.kernels_estimated) * (e.kernel_eager_us - e.kernel_graph_us) / 1e3;
    w.notes.push_back(fmt::format("eager launches are assumed (graphs=off): against CUDA graphs ({:.0f} against {:.0f} us per "
                                  "kernel) that choice moves the step {:.1f} ms at batch {}; the engine's command line and "
                                  "startup log decide it (--disable-cuda-graph or --enforce-eager; SGLang logs \"Capture cuda "
                                  "graph\" when it captures)",
                                  e.kernel_eager_us, e.kernel_graph_us, moved_ms, w.batches.front().batch));
  }
  check_memory_fit(report, rq, assumed_gpu, w);
  name_the_measurements(rq, w);
  if (!gpus && host_priced && !assumed_gpu && w.confidence == report::Confidence::high) {
    w.confidence = report::Confidence::medium;
    w.confidence_reason = "priced from this CPU's measurements: right for the CPU, not for the GPUs that would serve "
                          "this model";
  }
  if (!gpus && host_priced && !assumed_gpu)
    w.notes.push_back("this host has no GPU: the step is priced from the CPU engine's measurements, i.e. as if the "
                      "model ran on this CPU; to price a GPU, analyze a report from one or add --assume gpu=NAME");
  return w;
}

report::BottleneckSection analyze_bottlenecks(const report::Report& report, const std::vector<WorkloadRequest>& requests,
                                              const AnalyzeOptions& options) {
  report::BottleneckSection s;
  s.sources = ReportPrices(report).sources();
  if (options.assume) {
    AssumedTarget target = parse_assume(*options.assume);
    ReportPrices measured(report);
    if (!measured.compute_measured_on(target.gpu->device_match))
      s.sources.push_back(fmt::format("no GPU engine of this report measured a {}: its GEMMs, memory and launches are "
                                      "assumed{}",
                                      target.gpu->name,
                                      measured.gpus_are(target.gpu->device_match) ? ""
                                                                                   : ", and so are its all-reduces"));
    s.sources.push_back("assumed where not measured: " + target.describe());
  }
  for (const auto& rq : requests) s.workloads.push_back(estimate_workload(report, rq, options));
  return s;
}

}  // namespace interprobe::bottleneck
