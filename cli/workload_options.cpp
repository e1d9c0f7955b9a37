#include "cli/workload_options.hpp"

#include <algorithm>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/option_checks.hpp"
#include "common/errors.hpp"
#include "common/text.hpp"
#include "report/analysis/bottleneck/assumed_specs.hpp"
#include "report/analysis/bottleneck/layout_whatif.hpp"
#include "report/analysis/bottleneck/telemetry_tie.hpp"
#include "report/analysis/workload/builtin_models.hpp"
#include "report/analysis/workload/decode_step.hpp"

namespace interprobe::cli {

namespace {

std::vector<double> parse_numbers(const std::string& text, const char* option) {
  std::vector<double> out;
  for (const auto& item : split(text, ',')) {
    std::string s(trim(item));
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (s.empty() || used != s.size() || !(v > 0) || v > 1e12)
      throw InputError(fmt::format("{} '{}': '{}' is not a positive number", option, text, s));
    out.push_back(v);
  }
  return out;
}

std::vector<std::int64_t> parse_counts(const std::string& text, const char* option, std::int64_t max) {
  std::vector<std::int64_t> out;
  for (double v : parse_numbers(text, option)) {
    if (v != static_cast<double>(static_cast<std::int64_t>(v)) || v > static_cast<double>(max))
      throw InputError(fmt::format("{} '{}': give whole numbers from 1 to {}", option, text, max));
    out.push_back(static_cast<std::int64_t>(v));
  }
  return out;
}

// --itl-ms or --tokens-per-s, each value paired with --concurrency's (default 1 for all).
std::vector<bottleneck::Observation> observations(const WorkloadOptions& o) {
  if (o.itl_ms && o.tokens_per_s) throw InputError("--itl-ms and --tokens-per-s: give one of them");
  if (o.concurrency && !o.itl_ms && !o.tokens_per_s)
    throw InputError("--concurrency needs --itl-ms or --tokens-per-s (the speed observed at that concurrency)");
  if (!o.itl_ms && !o.tokens_per_s) return {};
  auto values = parse_numbers(o.itl_ms ? *o.itl_ms : *o.tokens_per_s, o.itl_ms ? "--itl-ms" : "--tokens-per-s");
  std::vector<std::int64_t> conc(values.size(), 1);
  if (o.concurrency) conc = parse_counts(*o.concurrency, "--concurrency", 65536);
  if (conc.size() != values.size())
    throw InputError(fmt::format("--concurrency has {} value(s) and the observed speeds {}: give one concurrency per speed",
                                 conc.size(), values.size()));
  std::vector<bottleneck::Observation> out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    // Decode runs one step per token of each sequence: the step time is the inter-token latency,
    // or the concurrency over the aggregate tokens per second.
    double step_us = o.itl_ms ? values[i] * 1e3 : static_cast<double>(conc[i]) / values[i] * 1e6;
    out.push_back({conc[i], step_us});
  }
  return out;
}

}  // namespace

void add_workload_options(CLI::App* app, WorkloadOptions& o) {
  app->add_option("--model", o.models, "Hugging Face config.json of a model to rank (repeatable; default: the examples "
                                       "llama-3.1-70b, mixtral-8x7b, deepseek-v3)");
  app->add_option("--tp", o.tp, "Tensor-parallel size (default: the ranks the report's all-reduce measured, else its GPUs)");
  app->add_flag("--ep", o.ep, "MoE experts by expert parallelism over the --tp ranks (whole experts per rank; the step "
                             "waits for the rank holding the most touched experts) instead of each expert split by TP");
  app->add_option("--batch", o.batch, "Batch sizes (sequences decoding together), comma-separated (default 1,8,64)");
  app->add_option("--context", o.context_tokens, "Cached tokens each sequence attends to (default 4096)");
  app->add_option("--itl-ms", o.itl_ms, "Observed inter-token latency in ms (comma-separated, one per --concurrency)")
      ->check(finite_number());
  app->add_option("--tokens-per-s", o.tokens_per_s, "Observed output tokens/s in all (one per --concurrency)");
  app->add_option("--concurrency", o.concurrency, "Concurrent requests of each observed speed (default 1)");
  app->add_option("--assume", o.assume, "gpu=NAME[,link=KEY][,engine=KEY][,graphs=on|off][,host_us=N]: price what the "
                                        "report did not measure from published figures (marked assumed); NAME: " +
                                            bottleneck::known_gpu_specs() + "; link: " + bottleneck::known_link_specs() +
                                            "; engine: " + bottleneck::known_engine_specs());
}

PreparedWorkloads prepare_workloads(const WorkloadOptions& o) {
  PreparedWorkloads p;
  if (o.assume) {
    bottleneck::parse_assume(*o.assume);  // a bad part exits 2 before the report is read
    p.analyze.assume = *o.assume;
  }
  if (o.context_tokens < 0 || o.context_tokens > (1LL << 24))
    throw InputError(fmt::format("--context {}: give cached tokens from 0 to 16777216", o.context_tokens));
  if (o.tp && (*o.tp < 1 || *o.tp > 4096)) throw InputError(fmt::format("--tp {}: give 1 to 4096", *o.tp));
  std::vector<std::int64_t> batches{1, 8, 64};
  if (o.batch) batches = parse_counts(*o.batch, "--batch", 65536);
  auto observed = observations(o);
  auto add = [&](workload::ModelConfig model, std::string origin) {
    bottleneck::WorkloadRequest rq;
    rq.model = std::move(model);
    rq.config = std::move(origin);
    rq.tp = o.tp.value_or(1);
    rq.expert_parallel = o.ep;
    rq.batches = batches;
    rq.context_tokens = o.context_tokens;
    rq.observed = observed;
    if (o.tp) workload::decode_step(rq.model, {rq.tp, 1, rq.context_tokens, 2, rq.expert_parallel});  // must fit: exit 2 now
    p.requests.push_back(std::move(rq));
  };
  if (o.models.empty())
    for (const auto& m : workload::builtin_models()) add(workload::parse_model_config(m.config_json, m.name), m.origin);
  for (const auto& file : o.models) add(workload::read_model_config(file), file);
  p.tp_given = o.tp.has_value();
  return p;
}

std::int64_t measured_tp(const report::Report& r) {
  std::int64_t tp = 0;
  if (r.collective)
    for (const auto& s : r.collective->allreduce)
      if (!s.points.empty()) tp = std::max(tp, s.ranks);
  if (tp == 0 && r.topology) tp = static_cast<std::int64_t>(r.topology->gpus.size());
  return std::max<std::int64_t>(tp, 1);
}

report::BottleneckSection rank_workloads(const report::Report& r, PreparedWorkloads p) {
  std::int64_t tp = measured_tp(r);
  std::vector<bottleneck::WorkloadRequest> fitting;
  std::vector<report::WorkloadEstimate> unfit;
  for (auto& rq : p.requests) {
    if (!p.tp_given) rq.tp = tp;
    try {
      workload::decode_step(rq.model, {rq.tp, 1, rq.context_tokens, 2, rq.expert_parallel});
      fitting.push_back(std::move(rq));
    } catch (const InputError& e) {
      report::WorkloadEstimate w = bottleneck::describe_workload(rq);
      w.verdict = fmt::format("{}: not modelled at TP {} (the TP measured here): {}", w.model, rq.tp, e.what());
      w.confidence_reason = "no step was modelled";
      unfit.push_back(std::move(w));
    }
  }
  auto section = bottleneck::analyze_bottlenecks(r, fitting, p.analyze);
  for (std::size_t i = 0; i < fitting.size() && i < section.workloads.size(); ++i)
    section.workloads[i].layouts = bottleneck::layout_what_if(r, fitting[i], p.analyze);
  for (auto& w : unfit) section.workloads.push_back(std::move(w));
  if (r.telemetry)
    for (auto& w : section.workloads) bottleneck::join_telemetry(*r.telemetry, w);
  return section;
}

}  // namespace interprobe::cli
