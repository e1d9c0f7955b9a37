#include "report/analysis/workload/decode_step.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"

namespace interprobe::workload {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0); }

// Non-GEMM kernels of every layer (two RMSNorms, rotary embedding, attention, activation) and
// the extra ones of an MoE layer (top-k routing, token permutation, weighted combine): counted
// from vLLM's eager decode path; fused variants launch fewer.
constexpr std::int64_t kLayerKernels = 5;
// MoE: top-k routing, aligning/sorting tokens by expert, activation between the grouped GEMMs,
// the weighted combine, and adding the shared expert's output.
constexpr std::int64_t kMoeKernels = 5;
// MLA decode with the up-projections absorbed (vLLM, SGLang): the q and kv latents' norms, the
// two per-head batched matmuls with W_UK and W_UV, and writing the latent to the cache.
constexpr std::int64_t kMlaKernels = 5;
// The sparse-attention indexer: key norm, rotary, fp8 quantization, cache store, scoring, top-k.
constexpr std::int64_t kIndexerKernels = 6;
constexpr std::int64_t kStepKernels = 4;     // embedding, final norm, LM head, sampling

// Builds a step layer by layer, merging identical GEMMs so the result stays short.
class StepBuilder {
 public:
  StepBuilder(const ModelConfig& model, const StepParams& params) : model_(model), p_(params) {
    if (p_.tp < 1 || p_.batch < 1 || p_.context_tokens < 0)
      throw InputError(fmt::format("--tp {} / --batch {} / --context {}: need tp >= 1, batch >= 1, context >= 0",
                                   p_.tp, p_.batch, p_.context_tokens));
    if (model.heads % p_.tp != 0)
      throw InputError(fmt::format("{}: --tp {} does not divide num_attention_heads {}; use a tp that does", model.label,
                                   p_.tp, model.heads));
    if (!model.mla && model.kv_heads % p_.tp != 0 && p_.tp % model.kv_heads != 0)
      throw InputError(fmt::format("{}: --tp {} and num_key_value_heads {} neither divide the other", model.label, p_.tp,
                                   model.kv_heads));
    if (p_.expert_parallel && (!model.moe || model.moe->routed_experts % p_.tp != 0))
      throw InputError(fmt::format("{}: --ep needs an MoE model whose routed experts divide among --tp {} ranks", model.label,
                                   p_.tp));
    heads_ = model.heads / p_.tp;
    // Fewer KV heads than ranks: each rank keeps a replica of one (vLLM's rule).
    kv_heads_ = std::max<std::int64_t>(1, model.kv_heads / p_.tp);
  }

  // Sums and products of the model's shapes: read_model_config's bounds keep them far inside
  // int64, and a ModelConfig built otherwise is refused rather than wrapped to a wrong step.
  std::int64_t mul(std::int64_t a, std::int64_t b) const {
    std::int64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out)) overflow(a, '*', b);
    return out;
  }
  std::int64_t add(std::int64_t a, std::int64_t b) const {
    std::int64_t out = 0;
    if (__builtin_add_overflow(a, b, &out)) overflow(a, '+', b);
    return out;
  }
  [[noreturn]] void overflow(std::int64_t a, char op, std::int64_t b) const {
    throw InputError(fmt::format("{}: the model's shapes overflow 64-bit arithmetic ({} {} {}); check its sizes", model_.label,
                                 a, op, b));
  }

  DecodeStep build() {
    step_.params = p_;
    const std::int64_t t = p_.batch;
    for (std::int64_t layer = 0; layer < model_.layers; ++layer) {
      std::string prefix = fmt::format("model.layers.{}.", layer);
      if (model_.mla) mla_attention(prefix);
      else gqa_attention(prefix);
      bool moe = model_.moe && model_.moe->moe_layer[static_cast<std::size_t>(layer)];
      if (moe) moe_mlp(prefix);
      else dense_mlp(prefix, "mlp", model_.intermediate);
      kernels_ += kLayerKernels + (moe ? kMoeKernels : 0) + (model_.indexer ? kIndexerKernels : 0);
    }
    // The LM head and routers stay bf16 under every quantization we model.
    gemm("lm_head", "lm_head", t, ceil_div(model_.vocab, p_.tp), model_.hidden, 1, WeightDtype::bf16);
    collectives();
    cache_reads();
    step_.kernels_estimated = kernels_ + kStepKernels;
    if (model_.mtp_layers > 0)
      step_.notes.push_back(fmt::format("{} multi-token-prediction layer(s) (num_nextn_predict_layers) are not in the "
                                        "step: they run only with speculative decoding",
                                        model_.mtp_layers));
    for (auto& [key, op] : merged_) step_.gemms.push_back(op);
    return step_;
  }

 private:
  void gemm(const std::string& name, const std::string& module, std::int64_t m, std::int64_t n, std::int64_t k,
            double count, std::optional<WeightDtype> dtype = std::nullopt) {
    WeightDtype d = dtype ? *dtype : model_.dtype_of(module);
    // A quantized GEMM's activations are quantized first (dynamic per-token scales): one more
    // kernel per GEMM of each layer.
    if (d != WeightDtype::bf16 && module.starts_with("model.layers.")) kernels_ += 1;
    auto key = std::make_tuple(order_of(name), name, m, n, k, static_cast<int>(d));
    auto it = merged_.try_emplace(key, GemmOp{name, m, n, k, 0.0, d}).first;
    it->second.count += count;
    it->second.kernels += it->second.grouped_experts() ? 1.0 : count;
  }
  // Keeps the step's GEMMs in the order a layer runs them.
  std::size_t order_of(const std::string& name) {
    auto [it, fresh] = order_.try_emplace(name, order_.size());
    return it->second;
  }

  void gqa_attention(const std::string& prefix) {
    const std::int64_t t = p_.batch, hd = model_.head_dim;
    gemm("self_attn.qkv_proj", prefix + "self_attn.q_proj", t, mul(add(heads_, mul(2, kv_heads_)), hd), model_.hidden, 1);
    gemm("self_attn.o_proj", prefix + "self_attn.o_proj", t, model_.hidden, mul(heads_, hd), 1);
    kernels_ += 2;
  }

  void mla_attention(const std::string& prefix) {
    const auto& a = *model_.mla;
    const std::int64_t t = p_.batch;
    std::int64_t q_in = a.q_lora_rank > 0 ? a.q_lora_rank : model_.hidden;
    // The down-projections (q_a, kv_a) are replicated on every rank; the up-projections are split by head.
    if (a.q_lora_rank > 0) gemm("self_attn.q_a_proj", prefix + "self_attn.q_a_proj", t, a.q_lora_rank, model_.hidden, 1);
    gemm(a.q_lora_rank > 0 ? "self_attn.q_b_proj" : "self_attn.q_proj", prefix + "self_attn.q_b_proj", t,
         mul(heads_, add(a.qk_nope_head_dim, a.qk_rope_head_dim)), q_in, 1);
    gemm("self_attn.kv_a_proj_with_mqa", prefix + "self_attn.kv_a_proj_with_mqa", t, add(a.kv_lora_rank, a.qk_rope_head_dim),
         model_.hidden, 1);
    gemm("self_attn.kv_b_proj", prefix + "self_attn.kv_b_proj", t, mul(heads_, add(a.qk_nope_head_dim, a.v_head_dim)),
         a.kv_lora_rank, 1);
    gemm("self_attn.o_proj", prefix + "self_attn.o_proj", t, model_.hidden, mul(heads_, a.v_head_dim), 1);
    kernels_ += (a.q_lora_rank > 0 ? 5 : 4) + kMlaKernels;
    if (!model_.indexer) return;
    const auto& ix = *model_.indexer;
    gemm("self_attn.indexer.wq_b", prefix + "self_attn.indexer.wq_b", t, mul(ix.heads, ix.head_dim), q_in, 1);
    gemm("self_attn.indexer.wk", prefix + "self_attn.indexer.wk", t, ix.head_dim, model_.hidden, 1);
    gemm("self_attn.indexer.weights_proj", prefix + "self_attn.indexer.weights_proj", t, ix.heads, model_.hidden, 1);
    kernels_ += 3;
  }

  void dense_mlp(const std::string& prefix, const std::string& name, std::int64_t intermediate, double count = 1,
                 std::int64_t m = 0) {
    if (m == 0) m = p_.batch;
    std::int64_t per_rank = ceil_div(intermediate, p_.tp);
    gemm(name + ".gate_up_proj", prefix + name + ".gate_proj", m, mul(2, per_rank), model_.hidden, count);
    gemm(name + ".down_proj", prefix + name + ".down_proj", m, model_.hidden, per_rank, count);
    kernels_ += 2;
  }

  void moe_mlp(const std::string& prefix) {
    const auto& e = *model_.moe;
    const std::int64_t t = p_.batch;
    gemm("mlp.gate", prefix + "mlp.gate", t, e.routed_experts, model_.hidden, 1, WeightDtype::bf16);
    double touched = experts_touched(e.routed_experts, e.experts_per_token, t);
    step_.experts_touched_per_moe_layer = touched;
    // Each touched expert multiplies the tokens routed to it: t·k/A(t) on average, rounded up.
    auto per_expert = static_cast<std::int64_t>(std::ceil(static_cast<double>(mul(t, e.experts_per_token)) / touched - 1e-9));
    std::string experts = model_.model_type == "mixtral" ? "block_sparse_moe.experts.0" : "mlp.experts.0";
    // TP: every rank holds a 1/tp slice of every expert. EP: whole experts, and the step waits
    // for the rank that drew the most of the touched ones.
    std::int64_t per_rank = p_.expert_parallel ? e.expert_intermediate : ceil_div(e.expert_intermediate, p_.tp);
    double instances = p_.expert_parallel ? busiest_rank_experts(e.routed_experts, p_.tp, touched) : touched;
    step_.expert_instances_per_moe_layer = instances;
    gemm("mlp.experts.gate_up_proj", prefix + experts + ".gate_proj", per_expert, mul(2, per_rank), model_.hidden, instances);
    gemm("mlp.experts.down_proj", prefix + experts + ".down_proj", per_expert, model_.hidden, per_rank, instances);
    kernels_ += 3;  // router + two grouped expert GEMMs
    if (e.shared_experts > 0) dense_mlp(prefix, "mlp.shared_experts", mul(e.shared_experts, e.expert_intermediate));
  }

  void collectives() {
    if (p_.tp == 1) return;
    // Row-parallel o_proj and down_proj each end in an all-reduce of the hidden state; the
    // vocab-parallel embedding adds one; the logits are gathered once.
    step_.collectives.push_back({"layer all-reduce (after attention and after the MLP)", CollectiveKind::all_reduce,
                                 mul(mul(p_.batch, model_.hidden), p_.activation_bytes), mul(2, model_.layers)});
    step_.collectives.push_back({"embedding all-reduce", CollectiveKind::all_reduce,
                                 mul(mul(p_.batch, model_.hidden), p_.activation_bytes), 1});
    step_.collectives.push_back({"logits gather", CollectiveKind::all_gather,
                                 mul(mul(p_.batch, model_.vocab), p_.activation_bytes), 1});
    kernels_ += 2 * model_.layers + 2;
  }

  void cache_reads() {
    const double sequences = static_cast<double>(p_.batch), ctx = static_cast<double>(p_.context_tokens);
    const double bytes = static_cast<double>(p_.activation_bytes), layers = static_cast<double>(model_.layers);
    if (!model_.mla) {
      step_.cache_reads.push_back(
          {"KV cache (K and V of this rank's KV heads)",
           layers * sequences * ctx * static_cast<double>(2 * kv_heads_ * model_.head_dim) * bytes});
      return;
    }
    const auto& a = *model_.mla;
    double attended = model_.indexer ? std::min(ctx, static_cast<double>(model_.indexer->topk)) : ctx;
    // Tensor parallelism does not shard the latent: every rank reads all of it.
    step_.cache_reads.push_back({"MLA latent KV (not sharded by TP)",
                                 layers * sequences * attended * static_cast<double>(a.kv_lora_rank + a.qk_rope_head_dim) * bytes});
    if (model_.indexer)
      step_.cache_reads.push_back({"sparse-attention indexer keys (every cached token)",
                                   layers * sequences * ctx * static_cast<double>(model_.indexer->head_dim) * bytes});
  }

  const ModelConfig& model_;
  StepParams p_;
  std::int64_t heads_ = 0, kv_heads_ = 0, kernels_ = 0;
  std::map<std::string, std::size_t> order_;
  std::map<std::tuple<std::size_t, std::string, std::int64_t, std::int64_t, std::int64_t, int>, GemmOp> merged_;
  DecodeStep step_;
};

}  // namespace

double GemmOp::weight_bytes() const {
  return count * static_cast<double>(n) * static_cast<double>(k) * bytes_per_weight(dtype);
}

double GemmOp::flops() const {
  return 2.0 * count * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

double DecodeStep::weight_bytes() const {
  double sum = 0;
  for (const auto& g : gemms) sum += g.weight_bytes();
  return sum;
}

double DecodeStep::cache_bytes() const {
  double sum = 0;
  for (const auto& c : cache_reads) sum += c.bytes;
  return sum;
}

double DecodeStep::flops() const {
  double sum = 0;
  for (const auto& g : gemms) sum += g.flops();
  return sum;
}

double experts_touched(std::int64_t experts, std::int64_t top_k, std::int64_t tokens) {
  if (experts <= 0) return 0;
  double miss = 1.0 - static_cast<double>(top_k) / static_cast<double>(experts);
  return static_cast<double>(experts) * (1.0 - std::pow(miss, static_cast<double>(tokens)));
}

double busiest_rank_experts(std::int64_t experts, std::int64_t ranks, double touched) {
  if (ranks <= 1 || experts <= 0) return touched;
  // Ranks that do not divide the experts: the busiest holds the larger share.
  const std::int64_t held = ceil_div(experts, ranks);
  const double p = std::clamp(touched / static_cast<double>(experts), 0.0, 1.0);
  // Binomial(held, p) per rank; E[max of `ranks` of them] = sum over k >= 1 of P(max >= k).
  std::vector<double> cdf(static_cast<std::size_t>(held) + 1);
  double pmf = std::pow(1.0 - p, static_cast<double>(held)), sum = 0;
  for (std::int64_t k = 0; k <= held; ++k) {
    sum += pmf;
    cdf[static_cast<std::size_t>(k)] = std::min(sum, 1.0);
    if (p < 1.0) pmf *= static_cast<double>(held - k) / static_cast<double>(k + 1) * p / (1.0 - p);
  }
  double expected = 0;
  for (std::int64_t k = 1; k <= held; ++k)
    expected += 1.0 - std::pow(cdf[static_cast<std::size_t>(k - 1)], static_cast<double>(ranks));
  return expected;
}

DecodeStep decode_step(const ModelConfig& model, const StepParams& params) { return StepBuilder(model, params).build(); }

std::vector<WeightShape> weight_shapes(const ModelConfig& model, std::int64_t tp) {
  StepParams p;
  p.tp = tp;
  std::vector<WeightShape> out;
  for (const auto& g : decode_step(model, p).gemms) {
    bool seen = false;
    for (const auto& w : out) seen = seen || (w.n == g.n && w.k == g.k && w.dtype == g.dtype);
    if (!seen) out.push_back({g.name, g.n, g.k, g.dtype});
  }
  return out;
}

}  // namespace interprobe::workload
