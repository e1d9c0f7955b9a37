// Every count and byte of a decode step checked against a hand calculation written out here
// (Llama-3.1-70B, Mixtral-8x7B, DeepSeek-V3, GLM-5 NVFP4 at TP 8), from the configs in
// examples/models/ whose values docs/reference.md §9 lists.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include "common/errors.hpp"
#include "report/analysis/workload/decode_step.hpp"
#include "report/analysis/workload/model_config.hpp"

using namespace interprobe::workload;
namespace fs = std::filesystem;

namespace {

ModelConfig example(const char* file) {
  return read_model_config(fs::path(INTERPROBE_SOURCE_DIR) / "examples/models" / file);
}

const GemmOp& op(const DecodeStep& step, const std::string& name) {
  for (const auto& g : step.gemms)
    if (g.name == name) return g;
  throw std::runtime_error("no GEMM " + name);
}

void expect_shape(const DecodeStep& step, const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k,
                  double count) {
  const auto& g = op(step, name);
  EXPECT_EQ(g.m, m) << name;
  EXPECT_EQ(g.n, n) << name;
  EXPECT_EQ(g.k, k) << name;
  EXPECT_NEAR(g.count, count, 1e-9) << name;
}

std::int64_t all_reduces(const DecodeStep& step) {
  std::int64_t sum = 0;
  for (const auto& c : step.collectives)
    if (c.kind == CollectiveKind::all_reduce) sum += c.count;
  return sum;
}

StepParams tp8(std::int64_t batch = 1) {
  StepParams p;
  p.tp = 8;
  p.batch = batch;
  p.context_tokens = 4096;
  return p;
}

// What parse_model_config says of a config text: "accepted", or its error.
std::string message(const std::string& text) {
  try {
    parse_model_config(text, "cfg.json");
  } catch (const interprobe::InputError& e) {
    return std::string(e.what());
  }
  return std::string("accepted");
}

}  // namespace

TEST(Workload, Llama31_70BAtTp8) {
  auto m = example("llama-3.1-70b.json");
  auto s = decode_step(m, tp8());
  // 64 heads / 8 = 8 per rank, 8 KV heads / 8 = 1, head_dim 8192/64 = 128.
  expect_shape(s, "self_attn.qkv_proj", 1, (8 + 2) * 128, 8192, 80);
  expect_shape(s, "self_attn.o_proj", 1, 8192, 8 * 128, 80);
  expect_shape(s, "mlp.gate_up_proj", 1, 2 * 28672 / 8, 8192, 80);
  expect_shape(s, "mlp.down_proj", 1, 8192, 28672 / 8, 80);
  expect_shape(s, "lm_head", 1, 128256 / 8, 8192, 1);
  EXPECT_EQ(s.gemms.size(), 5u);
  double params_per_rank = 80.0 * (1280.0 * 8192 + 8192.0 * 1024 + 7168.0 * 8192 + 8192.0 * 3584) + 16032.0 * 8192;
  EXPECT_DOUBLE_EQ(s.weight_bytes(), 2 * params_per_rank);  // bf16
  EXPECT_DOUBLE_EQ(s.flops(), 2 * params_per_rank);         // M = 1: one multiply-add per weight
  EXPECT_EQ(all_reduces(s), 2 * 80 + 1);
  EXPECT_EQ(s.collectives.at(0).bytes, 1 * 8192 * 2);
  EXPECT_EQ(s.collectives.at(2).bytes, 128256 * 2);  // logits gather
  // K and V of one KV head, 128 wide, bf16, 4096 tokens, 80 layers.
  EXPECT_DOUBLE_EQ(s.cache_bytes(), 80.0 * 4096 * 2 * 128 * 2);
}

TEST(Workload, Mixtral8x7BAtTp8TouchesTwoExpertsAtBatch1AndSevenAtBatch8) {
  auto m = example("mixtral-8x7b.json");
  auto s = decode_step(m, tp8());
  EXPECT_DOUBLE_EQ(s.experts_touched_per_moe_layer, 8 * (1 - (1 - 2.0 / 8)));  // = 2
  expect_shape(s, "self_attn.qkv_proj", 1, (4 + 2) * 128, 4096, 32);
  expect_shape(s, "mlp.gate", 1, 8, 4096, 32);
  expect_shape(s, "mlp.experts.gate_up_proj", 1, 2 * 14336 / 8, 4096, 2 * 32);
  expect_shape(s, "mlp.experts.down_proj", 1, 4096, 14336 / 8, 2 * 32);
  EXPECT_EQ(all_reduces(s), 2 * 32 + 1);

  auto s8 = decode_step(m, tp8(8));
  double touched = 8 * (1 - std::pow(0.75, 8));  // 7.199
  EXPECT_NEAR(s8.experts_touched_per_moe_layer, touched, 1e-12);
  // 8 tokens × 2 picks over 7.2 experts: 2.22 tokens each, rounded up to 3 rows.
  expect_shape(s8, "mlp.experts.gate_up_proj", 3, 3584, 4096, touched * 32);
  EXPECT_EQ(s8.collectives.at(0).bytes, 8 * 4096 * 2);
}

TEST(Workload, DeepSeekV3AtTp8IsMlaWithFp8WeightsAndAnUnshardedLatent) {
  auto m = example("deepseek-v3.json");
  ASSERT_TRUE(m.mla && m.moe);
  EXPECT_EQ(m.quantization.dtype, WeightDtype::fp8);
  auto s = decode_step(m, tp8());
  // 128 heads / 8 = 16 per rank.
  expect_shape(s, "self_attn.q_a_proj", 1, 1536, 7168, 61);
  expect_shape(s, "self_attn.q_b_proj", 1, 16 * (128 + 64), 1536, 61);
  expect_shape(s, "self_attn.kv_a_proj_with_mqa", 1, 512 + 64, 7168, 61);
  expect_shape(s, "self_attn.kv_b_proj", 1, 16 * (128 + 128), 512, 61);
  expect_shape(s, "self_attn.o_proj", 1, 7168, 16 * 128, 61);
  expect_shape(s, "mlp.gate_up_proj", 1, 2 * 18432 / 8, 7168, 3);  // first_k_dense_replace 3
  expect_shape(s, "mlp.gate", 1, 256, 7168, 58);
  expect_shape(s, "mlp.experts.gate_up_proj", 1, 2 * 2048 / 8, 7168, 8 * 58);
  expect_shape(s, "mlp.shared_experts.down_proj", 1, 7168, 2048 / 8, 58);
  EXPECT_EQ(op(s, "mlp.experts.down_proj").dtype, WeightDtype::fp8);
  EXPECT_EQ(op(s, "mlp.gate").dtype, WeightDtype::bf16);
  EXPECT_EQ(op(s, "lm_head").dtype, WeightDtype::bf16);
  EXPECT_EQ(all_reduces(s), 2 * 61 + 1);
  EXPECT_EQ(s.collectives.at(0).bytes, 7168 * 2);
  EXPECT_DOUBLE_EQ(s.cache_bytes(), 61.0 * 4096 * (512 + 64) * 2);  // every rank reads all of it
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("num_nextn_predict_layers"), std::string::npos);
}

// The seed case's model (docs/reference.md §10): 157 all-reduces of 12 KiB per step at batch 1, and
// ~9.2 GB of weights per rank, ≈ 5.1 ms at the RTX PRO 6000's 1,792 GB/s.
TEST(Workload, Glm5Nvfp4AtTp8MatchesTheSeedCase) {
  auto m = example("glm-5-nvfp4.json");
  ASSERT_TRUE(m.indexer);
  EXPECT_EQ(m.quantization.dtype, WeightDtype::nvfp4);
  auto s = decode_step(m, tp8());
  EXPECT_EQ(all_reduces(s), 157);
  EXPECT_EQ(s.collectives.at(0).bytes, 12 * 1024);
  EXPECT_EQ(op(s, "self_attn.o_proj").dtype, WeightDtype::bf16);  // self_attn* excluded
  EXPECT_EQ(op(s, "mlp.experts.gate_up_proj").dtype, WeightDtype::nvfp4);
  expect_shape(s, "self_attn.indexer.wq_b", 1, 32 * 128, 2048, 78);
  double attention = 78.0 * (2048.0 * 6144 + 2048.0 * 2048 + 576.0 * 6144 + 3584.0 * 512 + 6144.0 * 2048 +
                             4096.0 * 2048 + 128.0 * 6144 + 32.0 * 6144) * 2;
  double fp4 = 0.5 + 1.0 / 16;
  double dense_mlp = 3.0 * (3072.0 * 6144 + 6144.0 * 1536) * fp4;
  double routers = 75.0 * 256 * 6144 * 2;
  double experts = (8.0 * 75 + 75) * (512.0 * 6144 + 6144.0 * 256) * fp4;  // routed + shared
  double lm_head = 19360.0 * 6144 * 2;
  EXPECT_NEAR(s.weight_bytes(), attention + dense_mlp + routers + experts + lm_head, 1.0);
  EXPECT_NEAR(s.weight_bytes() / 1792e9 * 1e3, 5.13, 0.01);  // ms at 1,792 GB/s
  // Sparse attention reads top-2048 latents, the indexer every cached key.
  EXPECT_DOUBLE_EQ(s.cache_reads.at(0).bytes, 78.0 * 2048 * 576 * 2);
  EXPECT_DOUBLE_EQ(s.cache_reads.at(1).bytes, 78.0 * 4096 * 128 * 2);
}

TEST(Workload, ExpertsTouchedFollowsTheFormula) {
  EXPECT_DOUBLE_EQ(experts_touched(256, 8, 1), 8.0);
  EXPECT_NEAR(experts_touched(256, 8, 64), 256 * (1 - std::pow(1 - 8.0 / 256, 64)), 1e-9);
  EXPECT_LT(experts_touched(256, 8, 64), 256.0);
  EXPECT_NEAR(experts_touched(256, 8, 100000), 256.0, 1e-6);
}

TEST(Workload, Tp1HasNoCollectives) {
  auto s = decode_step(example("llama-3.1-70b.json"), StepParams{});
  EXPECT_TRUE(s.collectives.empty());
  expect_shape(s, "self_attn.qkv_proj", 1, (64 + 16) * 128, 8192, 80);
}

TEST(Workload, WeightShapesAreDistinct) {
  auto shapes = weight_shapes(example("deepseek-v3.json"), 8);
  for (std::size_t i = 0; i < shapes.size(); ++i)
    for (std::size_t j = i + 1; j < shapes.size(); ++j)
      EXPECT_FALSE(shapes[i].n == shapes[j].n && shapes[i].k == shapes[j].k && shapes[i].dtype == shapes[j].dtype)
          << shapes[i].name << " and " << shapes[j].name;
  // Shared experts have the routed experts' shape: one entry for both.
  EXPECT_EQ(shapes.size(), 11u);
}

TEST(Workload, BadConfigsNameTheKey) {
  EXPECT_NE(message(R"({"model_type":"gpt2"})").find("model_type 'gpt2' is not modelled"), std::string::npos);
  EXPECT_NE(message(R"({"hidden_size":1})").find("'model_type' is missing"), std::string::npos);
  std::string no_heads = R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"vocab_size":10,"intermediate_size":128})";
  EXPECT_NE(message(no_heads).find("cfg.json: key 'num_attention_heads' is missing"), std::string::npos);
  std::string negative = R"({"model_type":"llama","hidden_size":-64})";
  EXPECT_NE(message(negative).find("key 'hidden_size' must be an integer"), std::string::npos);
  std::string awq = R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"vocab_size":10,
      "intermediate_size":128,"num_attention_heads":4,"quantization_config":{"quant_method":"awq"}})";
  EXPECT_NE(message(awq).find("quant_method 'awq' is not modelled"), std::string::npos);
  EXPECT_NE(message("[1,2]").find("not a JSON object"), std::string::npos);
  EXPECT_THROW(decode_step(example("llama-3.1-70b.json"), StepParams{3}), interprobe::InputError);  // 64 % 3
}

// In-range but absurd shapes (issue 32: hidden 2^24, 4,096 layers, 65,536 experts gave a 6.8e16 us
// step), and more heads than hidden units without head_dim (head_dim 0): exit 2 naming the key.
TEST(Workload, AbsurdShapesNameTheKey) {
  auto llama = [](const std::string& hidden, const std::string& layers, const std::string& heads) {
    return R"({"model_type":"llama","hidden_size":)" + hidden + R"(,"num_hidden_layers":)" + layers +
           R"(,"vocab_size":1000,"intermediate_size":128,"num_attention_heads":)" + heads + "}";
  };
  EXPECT_EQ(message(llama("4096", "32", "32")), "accepted");
  EXPECT_NE(message(llama("16777216", "32", "32")).find("'hidden_size'"), std::string::npos);
  EXPECT_NE(message(llama("4096", "4096", "32")).find("'num_hidden_layers'"), std::string::npos);
  EXPECT_NE(message(llama("64", "2", "128")).find("head_dim"), std::string::npos);
  std::string moe = R"({"model_type":"qwen3_moe","hidden_size":64,"num_hidden_layers":2,"vocab_size":10,
      "intermediate_size":128,"num_attention_heads":4,"moe_intermediate_size":32,"num_experts":65536,
      "num_experts_per_tok":8})";
  EXPECT_NE(message(moe).find("'num_experts'"), std::string::npos);
}

TEST(Workload, HfQuantConfigBesideConfigJsonApplies) {
  auto dir = fs::temp_directory_path() / ("workload-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(fs::path(INTERPROBE_SOURCE_DIR) / "examples/models/llama-3.1-70b.json", dir / "config.json",
                fs::copy_options::overwrite_existing);
  {
    std::ofstream(dir / "hf_quant_config.json")
        << R"({"quantization":{"quant_algo":"NVFP4","group_size":16,"exclude_modules":["model.layers.0.*"]}})";
  }
  auto m = read_model_config(dir);
  fs::remove_all(dir);
  EXPECT_EQ(m.quantization.source, "hf_quant_config.json");
  EXPECT_EQ(m.dtype_of("model.layers.1.mlp.down_proj"), WeightDtype::nvfp4);
  EXPECT_EQ(m.dtype_of("model.layers.0.mlp.down_proj"), WeightDtype::bf16);
  EXPECT_EQ(m.name, "meta-llama/Llama-3.1-70B-Instruct");  // _name_or_path wins over the folder name
}

// Expert parallelism: each rank holds whole experts, and the step waits for the rank that drew the
// most of the touched ones. The expectation is checked against a direct simulation of independent
// routing (each expert touched with probability touched / E), with a fixed seed.
TEST(Workload, ExpertParallelWaitsForTheBusiestRank) {
  EXPECT_DOUBLE_EQ(busiest_rank_experts(128, 1, 51.6), 51.6);  // one rank: nothing to balance
  EXPECT_NEAR(busiest_rank_experts(128, 8, 128.0), 16.0, 1e-9);  // every expert touched: each rank's 16
  EXPECT_NEAR(busiest_rank_experts(128, 8, 0.0), 0.0, 1e-12);
  const double touched = 51.6;  // Qwen3-235B-A22B (128 experts, top 8) at 8 tokens
  const double expected = busiest_rank_experts(128, 8, touched);
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  auto uniform = [&] {  // splitmix64
    state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<double>((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
  };
  double sum = 0;
  const int trials = 20000;
  for (int t = 0; t < trials; ++t) {
    int busiest = 0;
    for (int rank = 0; rank < 8; ++rank) {
      int mine = 0;
      for (int e = 0; e < 16; ++e) mine += uniform() < touched / 128 ? 1 : 0;
      busiest = std::max(busiest, mine);
    }
    sum += busiest;
  }
  EXPECT_NEAR(expected, sum / trials, 0.05 * expected);
  EXPECT_GT(expected, 1.4 * touched / 8);  // well above the mean of 6.45: the price EP pays

  // The step: TP slices every touched expert by 8; EP runs the busiest rank's whole experts.
  auto dsv3 = example("deepseek-v3.json");
  auto tp = decode_step(dsv3, {8, 8, 1024, 2});
  auto ep = decode_step(dsv3, {8, 8, 1024, 2, true});
  EXPECT_NEAR(tp.expert_instances_per_moe_layer, tp.experts_touched_per_moe_layer, 1e-12);
  EXPECT_NEAR(ep.expert_instances_per_moe_layer, busiest_rank_experts(256, 8, ep.experts_touched_per_moe_layer), 1e-12);
  const auto& tp_down = op(tp, "mlp.experts.down_proj");
  const auto& ep_down = op(ep, "mlp.experts.down_proj");
  EXPECT_EQ(tp_down.k * 8, ep_down.k);  // whole experts: the full intermediate
  EXPECT_GT(ep_down.weight_bytes(), tp_down.weight_bytes());
  // One grouped launch per MoE layer whatever the experts; a dense GEMM launches once per instance.
  EXPECT_DOUBLE_EQ(ep_down.kernels, 58);
  EXPECT_DOUBLE_EQ(op(tp, "self_attn.o_proj").kernels, op(tp, "self_attn.o_proj").count);
  EXPECT_THROW(decode_step(example("llama-3.1-70b.json"), {8, 1, 1024, 2, true}), interprobe::InputError);
}
