// Issue 37: what a hostile config.json cannot do any more. Arithmetic on a model's shapes is
// checked (a ModelConfig built past read_model_config's bounds is refused, not wrapped), and
// module patterns kept in bf16 match as the listed names and wildcards say.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "common/errors.hpp"
#include "report/analysis/workload/decode_step.hpp"
#include "report/analysis/workload/model_config.hpp"

using namespace interprobe::workload;

namespace {

ModelConfig dense(std::int64_t hidden, std::int64_t intermediate) {
  ModelConfig m;
  m.model_type = "llama";
  m.label = "huge.json";
  m.hidden = hidden;
  m.layers = 2;
  m.heads = 8;
  m.kv_heads = 8;
  m.head_dim = 128;
  m.intermediate = intermediate;
  m.vocab = 32000;
  return m;
}

}  // namespace

TEST(ModelConfigBounds, ShapeArithmeticThatOverflowsIsRefusedNamingTheModel) {
  StepParams p;
  p.batch = 64;
  // 2 * intermediate overflows int64: the old step wrapped it to a negative GEMM width.
  try {
    decode_step(dense(4096, std::int64_t{1} << 62), p);
    FAIL() << "no error";
  } catch (const interprobe::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("huge.json: the model's shapes overflow 64-bit arithmetic"), std::string::npos)
        << e.what();
  }
  // batch * hidden * activation bytes, the all-reduce message.
  p.tp = 2;
  EXPECT_THROW(decode_step(dense(std::int64_t{1} << 60, 4096), p), interprobe::InputError);
  EXPECT_NO_THROW(decode_step(dense(8192, 28672), p));
}

TEST(ModulePatterns, PlainNamesCoverModulesUnderAndEndingInThem) {
  ModulePatterns patterns;
  ASSERT_TRUE(patterns.add("lm_head"));
  ASSERT_TRUE(patterns.add("model.layers.0.mlp"));
  ASSERT_TRUE(patterns.add("mlp.gate"));
  ASSERT_TRUE(patterns.add("model.layers.*.self_attn*"));
  EXPECT_TRUE(patterns.matches("lm_head"));
  EXPECT_TRUE(patterns.matches("model.lm_head"));
  EXPECT_TRUE(patterns.matches("model.layers.0.mlp.down_proj"));
  EXPECT_TRUE(patterns.matches("model.layers.7.mlp.gate"));
  EXPECT_TRUE(patterns.matches("model.layers.12.self_attn.o_proj"));
  EXPECT_FALSE(patterns.matches("model.layers.1.mlp.down_proj"));
  EXPECT_FALSE(patterns.matches("model.layers.0.mlpx.down_proj"));
  EXPECT_FALSE(patterns.matches("xlm_head"));
  EXPECT_FALSE(patterns.matches("model.layers.1.mlp.gate_proj"));
}

TEST(ModulePatterns, WildcardsAreDeduplicatedAndCapped) {
  ModulePatterns patterns;
  for (int round = 0; round < 3; ++round)
    for (std::size_t i = 0; i < ModulePatterns::kMaxWildcardPatterns; ++i)
      ASSERT_TRUE(patterns.add("model.layers." + std::to_string(i) + ".x*"));
  EXPECT_EQ(patterns.size(), ModulePatterns::kMaxWildcardPatterns);
  EXPECT_FALSE(patterns.add("one.more*"));
  for (int i = 0; i < 100000; ++i) ASSERT_TRUE(patterns.add("plain.name." + std::to_string(i)));
  // Each module is matched against the wildcards once: later passes are lookups only (20
  // passes of 256 wildcards over 512 modules would be 2.6 million fnmatch calls).
  auto started = std::chrono::steady_clock::now();
  for (int pass = 0; pass < 20; ++pass)
    for (int i = 0; i < 512; ++i) patterns.matches("model.layers." + std::to_string(i) + ".mlp.down_proj");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 10.0);
  EXPECT_TRUE(patterns.matches("model.layers.255.x_proj"));
  EXPECT_TRUE(patterns.matches("plain.name.99999.weight"));
}
