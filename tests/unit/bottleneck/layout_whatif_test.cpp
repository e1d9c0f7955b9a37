// analyze's layout what-if (layout_whatif.hpp) on the seed case (tests/fixtures/seed-case: 8 GPUs
// of 96 GB, an 8-rank all-reduce of 50 us + S / 18.3 GB/s, no all-to-all measured) with GLM-5,
// DeepSeek-V3 and Mixtral; expected numbers are computed here by hand from the configs.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "report/analysis/bottleneck/layout_whatif.hpp"
#include "report/analysis/workload/decode_step.hpp"
#include "report/analysis/workload/model_config.hpp"
#include "model/json.hpp"

namespace bn = interprobe::bottleneck;
namespace report = interprobe::report;
namespace workload = interprobe::workload;

namespace {

const std::string kModels = std::string(INTERPROBE_SOURCE_DIR) + "/examples/models/";

report::Report seed_report() { return report::read_report_file(std::string(INTERPROBE_FIXTURES) + "/seed-case/report.json"); }

bn::WorkloadRequest request(const std::string& config, std::vector<std::int64_t> batches = {1, 64}) {
  bn::WorkloadRequest rq;
  rq.model = workload::read_model_config(kModels + config);
  rq.config = config;
  rq.tp = 8;
  rq.batches = std::move(batches);
  return rq;
}

bn::AnalyzeOptions assume_rtx_pro_6000() {
  bn::AnalyzeOptions o;
  o.assume = "gpu=rtx-pro-6000";
  return o;
}

const report::LayoutOption& find(const std::vector<report::LayoutOption>& layouts, const std::string& name, std::int64_t batch) {
  for (const auto& o : layouts)
    if (o.name == name && o.batch == batch) return o;
  throw std::runtime_error("no layout " + name + " at batch " + std::to_string(batch));
}

double seed_allreduce_us(double bytes) { return 50.0 + bytes / (32.0 / 1.75 * 1e3); }

}  // namespace

TEST(LayoutWhatIf, DeepEpBytesPerTokenAreTheReferencesForDeepSeekV3) {
  // H 7168, top-8: 59,264 B dispatch + 114,688 B combine per token per MoE layer.
  EXPECT_DOUBLE_EQ(8 * bn::ep_dispatch_bytes_per_copy(7168), 59264.0);
  EXPECT_DOUBLE_EQ(8 * bn::ep_combine_bytes_per_copy(7168), 114688.0);
}

TEST(LayoutWhatIf, SeedCaseGlm5ListsEveryLayoutEightGpusAllowWithMemoryAndCollectives) {
  const auto layouts = bn::layout_what_if(seed_report(), request("glm-5-nvfp4.json"), assume_rtx_pro_6000());
  // TP8, attention TP8 + EP8, EP8 with DP attention, experts TP2xEP4 and TP4xEP2: at 2 batches each.
  ASSERT_EQ(layouts.size(), 10u);
  const auto& tp8 = find(layouts, "TP8", 64);
  const auto& tp_ep8 = find(layouts, "attention TP8 + experts EP8", 64);
  const auto& ep8 = find(layouts, "EP8 (attention DP8)", 64);
  find(layouts, "attention TP8 + experts TP2xEP4", 64);
  find(layouts, "attention TP8 + experts TP4xEP2", 64);
  // The 256 routed experts: 75 MoE layers x 256 x 3 x 6144 x 2048 weights at NVFP4's 0.5625 B,
  // 408 GB, 51 GB per GPU in every layout (E/ep experts of 1/tp each, tp x ep = 8).
  const double experts_per_gpu = 75.0 * 256 * 3 * 6144 * 2048 * 0.5625 / 8;
  EXPECT_NEAR(tp8.weight_bytes_per_gpu, tp_ep8.weight_bytes_per_gpu, 1.0);  // same attention TP, same expert share
  EXPECT_GT(tp8.weight_bytes_per_gpu, experts_per_gpu);
  EXPECT_LT(tp8.weight_bytes_per_gpu, experts_per_gpu + 10e9);
  // Attention data-parallel keeps every non-expert weight on every GPU: more memory per GPU.
  EXPECT_GT(ep8.weight_bytes_per_gpu, tp8.weight_bytes_per_gpu + 5e9);
  // MLA's latent cache is not sharded by TP: each TP rank holds all 64 sequences', a DP rank 8 of them.
  EXPECT_NEAR(tp8.kv_bytes_per_gpu / ep8.kv_bytes_per_gpu, 8.0, 1e-9);
  ASSERT_TRUE(tp8.gpu_memory_bytes);
  EXPECT_DOUBLE_EQ(*tp8.gpu_memory_bytes, 96e9);
  EXPECT_FALSE(tp8.over_by_bytes);

  // TP8: the hidden state's all-reduce, priced on the report's 8-rank curve (64 x 6144 x 2 B). The
  // seed's curve is constructed from the session's figures, so the price is labelled assumed.
  ASSERT_FALSE(tp8.collectives.empty());
  EXPECT_EQ(tp8.collectives[0].collective, "all_reduce");
  EXPECT_EQ(tp8.collectives[0].bytes, 64 * 6144 * 2);
  EXPECT_NEAR(*tp8.collectives[0].us, seed_allreduce_us(64 * 6144 * 2), 0.05 * seed_allreduce_us(64 * 6144 * 2));
  EXPECT_EQ(tp8.collectives[0].provenance, report::Provenance::assumed);
  // EP8: dispatch and combine over 8 ranks per MoE layer, no all-to-all measured: assumed from the all-reduce.
  int all_to_alls = 0;
  for (const auto& c : ep8.collectives) {
    EXPECT_EQ(c.collective, "alltoall") << c.purpose;  // attention is data-parallel: nothing else
    EXPECT_EQ(c.calls, 75);
    EXPECT_EQ(c.provenance, report::Provenance::assumed);
    ++all_to_alls;
  }
  EXPECT_EQ(all_to_alls, 2);
  // Dispatch: 8 tokens per rank x 8 copies / 8 peers = 8 copies of 16 + 6144 + 192 B per peer, x 8 peers.
  EXPECT_EQ(ep8.collectives[0].bytes, 8 * 6352 * 8);
  EXPECT_NEAR(*ep8.collectives[0].us, seed_allreduce_us(8 * 6352 * 4), 0.05 * seed_allreduce_us(8 * 6352 * 4));
  for (const auto* o : {&tp8, &tp_ep8, &ep8}) {
    ASSERT_TRUE(o->modeled_step_us) << o->name;
    EXPECT_NEAR(*o->modeled_step_us, *o->memory_read_us + *o->communication_us, 1e-6);
    EXPECT_EQ(o->provenance, report::Provenance::assumed) << o->name;  // memory reads from the GPU's specs
  }
}

TEST(LayoutWhatIf, AMeasuredAllToAllCurvePricesTheExpertLayouts) {
  auto r = seed_report();
  report::AllreduceSweep a2a;
  a2a.collective = report::CollectiveOp::alltoall;
  a2a.op = "none";
  a2a.ranks = 8;
  for (std::int64_t bytes = 1024; bytes <= (64 << 20); bytes *= 4) {
    report::AllreducePoint p;
    p.bytes = bytes;
    p.time_us = 1000.0 + static_cast<double>(bytes) / 1e3;  // a slow all-to-all: 1 ms floor
    a2a.points.push_back(p);
  }
  r.collective->sweeps.push_back(a2a);
  const auto layouts = bn::layout_what_if(r, request("glm-5-nvfp4.json"), assume_rtx_pro_6000());
  const auto& ep8 = find(layouts, "EP8 (attention DP8)", 64);
  const double bytes = 8 * 6352 * 8;
  EXPECT_NE(ep8.collectives[0].provenance, report::Provenance::assumed);
  EXPECT_NEAR(*ep8.collectives[0].us, 1000.0 + bytes / 1e3, 0.05 * (1000.0 + bytes / 1e3));
  EXPECT_EQ(ep8.limited_by, "communication");  // 150 all-to-alls of over 1 ms each
}

TEST(LayoutWhatIf, DeepSeekV3DoesNotFitEightGpusOf96GbAndSaysByHowMuch) {
  const auto layouts = bn::layout_what_if(seed_report(), request("deepseek-v3.json", {64}), assume_rtx_pro_6000());
  ASSERT_FALSE(layouts.empty());
  for (const auto& o : layouts) {
    // 671 B parameters in FP8: about 84 GB per GPU before the KV cache, over 86.4 GB usable with it or without.
    EXPECT_GT(o.weight_bytes_per_gpu, 75e9) << o.name;
    if (o.name.find("DP8") != std::string::npos) {
      ASSERT_TRUE(o.over_by_bytes) << o.name;
      EXPECT_EQ(o.limited_by, "does not fit");
      EXPECT_NEAR(*o.over_by_bytes, o.weight_bytes_per_gpu + o.kv_bytes_per_gpu - 0.9 * 96e9, 1.0);
    }
  }
}

TEST(LayoutWhatIf, MixtralHasEightExpertsForEightGpusAndADenseModelHasNoLayouts) {
  const auto mixtral = bn::layout_what_if(seed_report(), request("mixtral-8x7b.json", {8}), assume_rtx_pro_6000());
  EXPECT_NO_THROW(find(mixtral, "EP8 (attention DP8)", 8));
  EXPECT_NO_THROW(find(mixtral, "TP8", 8));
  for (const auto& o : mixtral) EXPECT_FALSE(o.over_by_bytes) << o.name;  // 47 B parameters in bf16 over 8 GPUs
  EXPECT_TRUE(bn::layout_what_if(seed_report(), request("llama-3.1-70b.json"), assume_rtx_pro_6000()).empty());
}

// Under EP the step waits for the GPU that drew the most touched experts: at batch 1 (8 of 256
// experts touched, a mean of one per GPU) the busiest of 8 GPUs draws about 2.5, so attention TP8 +
// experts EP8 reads more than TP8 (same attention, same expert share stored); at batch 64 (222 of
// 256 touched, 27.8 per GPU of 32) the busiest is close to the mean and the two nearly meet.
TEST(LayoutWhatIf, ExpertParallelReadsTheBusiestGpusExperts) {
  const auto layouts = bn::layout_what_if(seed_report(), request("glm-5-nvfp4.json"), assume_rtx_pro_6000());
  const double expert_bytes = 3.0 * 6144 * 2048 * 0.5625;  // one whole NVFP4 expert
  const double gbps = 1792e9 * 0.8;                          // the assumed RTX PRO 6000 read rate
  const double tp_b1 = *find(layouts, "TP8", 1).memory_read_us, ep_b1 = *find(layouts, "attention TP8 + experts EP8", 1).memory_read_us;
  const double busiest_b1 = workload::busiest_rank_experts(256, 8, 8.0);
  EXPECT_NEAR(busiest_b1, 2.54, 0.02);
  // The difference is the busiest GPU's extra experts over the mean one, in all 75 MoE layers.
  EXPECT_NEAR(ep_b1 - tp_b1, (busiest_b1 - 1.0) * expert_bytes * 75 / gbps * 1e6, 0.01 * (ep_b1 - tp_b1));
  const double tp_b64 = *find(layouts, "TP8", 64).memory_read_us, ep_b64 = *find(layouts, "attention TP8 + experts EP8", 64).memory_read_us;
  EXPECT_GT(ep_b64, tp_b64);
  EXPECT_LT(ep_b64 / tp_b64, 1.1);
  EXPECT_GT(ep_b1 / tp_b1, 1.2);
}
