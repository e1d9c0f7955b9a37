#include "report/analysis/bottleneck/layout_whatif.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "report/analysis/bottleneck/assumed_specs.hpp"
#include "report/analysis/bottleneck/measured_curve.hpp"
#include "report/analysis/bottleneck/report_prices.hpp"
#include "report/analysis/workload/decode_step.hpp"

namespace interprobe::bottleneck {

namespace {

// vLLM's default gpu_memory_utilization: the share of a GPU's memory it lets weights and KV use.
constexpr double kUsableMemoryFraction = 0.9;

bool is_routed_expert(const workload::GemmOp& op) { return op.name.rfind("mlp.experts.", 0) == 0; }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

struct Layout {
  std::string name;
  std::int64_t attention_tp, attention_dp, expert_tp, expert_ep;
};

std::vector<Layout> layouts_for(std::int64_t gpus, std::int64_t experts) {
  std::vector<Layout> out;
  out.push_back({fmt::format("TP{}", gpus), gpus, 1, gpus, 1});
  if (experts % gpus == 0) {
    out.push_back({fmt::format("attention TP{0} + experts EP{0}", gpus), gpus, 1, 1, gpus});
    out.push_back({fmt::format("EP{0} (attention DP{0})", gpus), 1, gpus, 1, gpus});
  }
  for (std::int64_t t = 2; t < gpus; ++t)
    if (gpus % t == 0 && experts % (gpus / t) == 0)
      out.push_back({fmt::format("attention TP{} + experts TP{}xEP{}", gpus, t, gpus / t), gpus, 1, t, gpus / t});
  return out;
}

const report::Gpu* first_gpu(const report::Report& r) {
  return r.topology && !r.topology->gpus.empty() ? &r.topology->gpus.front() : nullptr;
}

// Adds a collective to the layout and its time to the communication total (nullopt once any part
// has no price).
void add_collective(report::LayoutOption& o, std::string purpose, const char* collective, std::int64_t ranks, std::int64_t bytes,
                    std::int64_t calls, const std::optional<Price>& price) {
  report::LayoutCollective c{std::move(purpose), collective, ranks, bytes, calls, std::nullopt, Provenance::not_measured};
  if (price) {
    c.us = price->us;
    c.provenance = price->provenance;
    if (o.communication_us) *o.communication_us += price->us * static_cast<double>(calls);
    o.provenance = worst(o.provenance, price->provenance);
  } else {
    o.communication_us.reset();
    o.provenance = Provenance::not_measured;
  }
  o.collectives.push_back(std::move(c));
}

// The expert bytes one GPU reads per step: 1/gpus of the touched experts' under TP, which spreads
// every touched expert evenly; under EP the step waits for the expert group that drew the most.
double expert_bytes_read_per_gpu(double expert_read_bytes, double touched, std::int64_t experts, const Layout& l,
                                 std::int64_t gpus) {
  const double mean = expert_read_bytes / static_cast<double>(gpus);
  if (l.expert_ep <= 1 || touched <= 0) return mean;
  return mean * workload::busiest_rank_experts(experts, l.expert_ep, touched) / (touched / static_cast<double>(l.expert_ep));
}

report::LayoutOption price_layout(const report::Report& report, const WorkloadRequest& rq, const PriceSource& prices,
                                  const Layout& l, std::int64_t gpus, std::int64_t batch) {
  const auto& model = rq.model;
  const auto& moe = *model.moe;
  report::LayoutOption o;
  o.name = l.name;
  o.attention_tp = l.attention_tp;
  o.attention_dp = l.attention_dp;
  o.expert_tp = l.expert_tp;
  o.expert_ep = l.expert_ep;
  o.batch = batch;
  const std::int64_t act = 2;  // bf16 activations
  // The attention group (one of attention_dp) decodes its share of the sequences.
  const std::int64_t group_batch = ceil_div(batch, l.attention_dp);
  const workload::DecodeStep attention = workload::decode_step(model, {l.attention_tp, group_batch, rq.context_tokens, act});
  const workload::DecodeStep whole = workload::decode_step(model, {1, batch, rq.context_tokens, act});
  double dense_bytes = 0, expert_read_bytes = 0, expert_stored_bytes = 0;
  for (const auto& g : attention.gemms)
    if (!is_routed_expert(g)) dense_bytes += g.weight_bytes();
  for (const auto& g : whole.gemms)
    if (is_routed_expert(g)) expert_read_bytes += g.weight_bytes();
  if (whole.experts_touched_per_moe_layer > 0)
    expert_stored_bytes = expert_read_bytes * static_cast<double>(moe.routed_experts) / whole.experts_touched_per_moe_layer;
  // The embedding table is stored (vocab-parallel under TP) though a step only looks rows up.
  const double embedding = static_cast<double>(model.vocab * model.hidden * act) / static_cast<double>(l.attention_tp);
  // Each GPU holds E/ep experts, each a 1/tp slice: expert_tp x expert_ep = gpus, so 1/gpus of them in every layout.
  o.weight_bytes_per_gpu = dense_bytes + embedding + expert_stored_bytes / static_cast<double>(gpus);
  o.kv_bytes_per_gpu = attention.cache_bytes();
  if (const auto* gpu = first_gpu(report); gpu && gpu->memory_bytes) {
    o.gpu_memory_bytes = static_cast<double>(*gpu->memory_bytes);
    const double over = o.weight_bytes_per_gpu + o.kv_bytes_per_gpu - kUsableMemoryFraction * *o.gpu_memory_bytes;
    if (over > 0) o.over_by_bytes = over;
  }

  o.provenance = Provenance::measured;
  const double read_bytes = dense_bytes + expert_bytes_read_per_gpu(expert_read_bytes, whole.experts_touched_per_moe_layer,
                                                                     moe.routed_experts, l, gpus) +
                            o.kv_bytes_per_gpu;
  if (auto read = prices.stream_read(read_bytes)) {
    o.memory_read_us = read->us;
    o.provenance = worst(o.provenance, read->provenance);
  }
  o.communication_us = 0.0;
  const std::int64_t hidden_bytes = model.hidden * act;
  const std::int64_t moe_layers = std::count(moe.moe_layer.begin(), moe.moe_layer.end(), true);
  const std::int64_t dense_layers = model.layers - moe_layers;
  if (l.attention_tp > 1) {
    // Row-parallel o_proj (every layer) and the dense MLPs' down_proj end in an all-reduce.
    const std::int64_t bytes = group_batch * hidden_bytes;
    add_collective(o, "attention all-reduce", "all_reduce", l.attention_tp, bytes, model.layers, prices.all_reduce(bytes, l.attention_tp));
    if (dense_layers > 0)
      add_collective(o, "dense MLP all-reduce", "all_reduce", l.attention_tp, bytes, dense_layers,
                     prices.all_reduce(bytes, l.attention_tp));
  }
  if (l.expert_ep == 1) {
    const std::int64_t bytes = batch * hidden_bytes;  // the experts' row-parallel down_proj
    add_collective(o, "MoE all-reduce", "all_reduce", l.expert_tp, bytes, moe_layers, prices.all_reduce(bytes, l.expert_tp));
  } else {
    // Each EP rank sends its tokens' k copies, spread over the ep ranks (reference: DeepEP).
    const double tokens = static_cast<double>(ceil_div(batch, l.expert_ep));
    const double copies = static_cast<double>(moe.experts_per_token) * tokens / static_cast<double>(l.expert_ep);
    for (auto [purpose, per_copy] : {std::pair{"MoE dispatch", ep_dispatch_bytes_per_copy(model.hidden)},
                                     std::pair{"MoE combine", ep_combine_bytes_per_copy(model.hidden)}}) {
      const auto bytes = static_cast<std::int64_t>(std::ceil(copies * per_copy)) * l.expert_ep;
      add_collective(o, purpose, "alltoall", l.expert_ep, bytes, moe_layers, all_to_all_price(report, prices, bytes, l.expert_ep));
    }
    if (l.expert_tp > 1) {
      const std::int64_t bytes = ceil_div(batch, l.expert_ep) * hidden_bytes;
      add_collective(o, "expert all-reduce", "all_reduce", l.expert_tp, bytes, moe_layers, prices.all_reduce(bytes, l.expert_tp));
    }
  }
  if (o.memory_read_us && o.communication_us) o.modeled_step_us = *o.memory_read_us + *o.communication_us;
  else o.provenance = Provenance::not_measured;
  if (o.over_by_bytes) o.limited_by = "does not fit";
  else if (!o.modeled_step_us) o.limited_by = "not priced";
  else o.limited_by = *o.communication_us > *o.memory_read_us ? "communication" : "memory reads";
  return o;
}

}  // namespace

double ep_dispatch_bytes_per_copy(std::int64_t hidden) {
  return 16.0 + static_cast<double>(hidden) + 4.0 * static_cast<double>(hidden) / 128.0;
}
double ep_combine_bytes_per_copy(std::int64_t hidden) { return 2.0 * static_cast<double>(hidden); }

std::optional<Price> all_to_all_price(const report::Report& report, const PriceSource& prices, std::int64_t bytes,
                                      std::int64_t ranks) {
  if (report.collective) {
    const report::AllreduceSweep* best = nullptr;
    for (const auto& s : report.collective->sweeps) {
      if (s.collective != report::CollectiveOp::alltoall || s.ranks != ranks || s.variant != report::AllreduceVariant::default_ ||
          s.points.empty())
        continue;
      if (!best || (s.backend == report::AllreduceBackend::nccl && best->backend != report::AllreduceBackend::nccl)) best = &s;
    }
    if (best) {
      std::vector<std::pair<double, double>> points;
      for (const auto& p : best->points)
        if (!p.in_place && p.wrong_elements == 0) points.push_back({static_cast<double>(p.bytes), p.time_us});
      MeasuredCurve curve(std::move(points));
      if (!curve.empty()) {
        const auto v = curve.at(static_cast<double>(bytes));
        return Price{v.y, v.provenance};
      }
    }
  }
  auto as_all_reduce = prices.all_reduce(std::max<std::int64_t>(1, bytes / 2), ranks);
  if (!as_all_reduce) return std::nullopt;
  return Price{as_all_reduce->us, Provenance::assumed};
}

std::vector<report::LayoutOption> layout_what_if(const report::Report& report, const WorkloadRequest& request,
                                                 const PriceSource& prices) {
  std::vector<report::LayoutOption> out;
  if (!request.model.moe || request.model.moe->routed_experts < 2) return out;
  std::int64_t gpus = request.tp;
  if (report.topology && report.topology->gpus.size() >= 2) gpus = static_cast<std::int64_t>(report.topology->gpus.size());
  if (gpus < 2) return out;
  for (const auto& layout : layouts_for(gpus, request.model.moe->routed_experts)) {
    for (std::int64_t batch : request.batches) {
      try {
        out.push_back(price_layout(report, request, prices, layout, gpus, batch));
      } catch (const InputError&) {
        break;  // the attention TP does not divide the heads: not a layout this model allows
      }
    }
  }
  return out;
}

std::vector<report::LayoutOption> layout_what_if(const report::Report& report, const WorkloadRequest& request,
                                                 const AnalyzeOptions& options) {
  ReportPrices measured(report);
  if (!options.assume) return layout_what_if(report, request, measured);
  return layout_what_if(report, request, *assumed_prices(measured, *options.assume));
}

}  // namespace interprobe::bottleneck
