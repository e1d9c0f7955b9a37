// The ranking's arithmetic on a price source written out here (so every expected number is a hand
// calculation), over the example models.
#include <gtest/gtest.h>

#include <filesystem>

#include "report/analysis/bottleneck/measured_curve.hpp"
#include "report/analysis/bottleneck/step_pricing.hpp"
#include "report/analysis/workload/decode_step.hpp"
#include "report/analysis/workload/model_config.hpp"

using namespace interprobe;
using namespace interprobe::bottleneck;
namespace fs = std::filesystem;

TEST(MeasuredCurve, MeasuredInterpolatedAndExtrapolatedAreTold) {
  MeasuredCurve c({{1000, 10}, {100000, 1000}, {10, 5}, {0, 3}, {1000, 12}});
  auto exact = c.at(1000);
  EXPECT_DOUBLE_EQ(exact.y, 10);  // the smaller of the duplicates
  EXPECT_EQ(exact.provenance, Provenance::measured);
  auto between = c.at(10000);  // straight in log-log from (1e3, 10) to (1e5, 1000): 100
  EXPECT_NEAR(between.y, 100, 1e-9);
  EXPECT_EQ(between.provenance, Provenance::interpolated);
  auto below = c.at(1);  // the latency floor
  EXPECT_DOUBLE_EQ(below.y, 5);
  EXPECT_EQ(below.provenance, Provenance::extrapolated);
  auto above = c.at(400000);  // the last point's bandwidth
  EXPECT_DOUBLE_EQ(above.y, 4000);
  EXPECT_EQ(above.provenance, Provenance::extrapolated);
  EXPECT_EQ(c.floor_y(), 5);
  EXPECT_EQ(MeasuredCurve({}).at(5).provenance, Provenance::not_measured);
}

namespace {

// GEMMs stream their weights at 1,000 GB/s up to a 100 FLOP/byte ridge (1e14 FLOP/s); an
// all-reduce costs 20 µs + bytes / 10 GB/s; the cache streams at 1,000 GB/s; a launch is 5 µs.
class HandPrices : public PriceSource {
 public:
  bool with_gemms = true, with_allreduce = true, with_launch = true;
  std::optional<Price> gemm(const workload::GemmOp& op) const override {
    if (!with_gemms) return std::nullopt;
    double one = op.weight_bytes() / op.count;
    double flops = op.flops() / op.count;
    return Price{std::max(one / 1e9 * 1e6 / 1000, flops / 1e14 * 1e6), Provenance::interpolated};
  }
  std::optional<double> ridge_flop_per_byte(workload::WeightDtype) const override { return 100.0; }
  std::optional<Price> all_reduce(std::int64_t bytes, std::int64_t) const override {
    if (!with_allreduce) return std::nullopt;
    return Price{20 + static_cast<double>(bytes) / 10e9 * 1e6, Provenance::measured};
  }
  std::optional<double> all_reduce_floor_us(std::int64_t) const override {
    return with_allreduce ? std::optional<double>(20.0) : std::nullopt;
  }
  std::optional<Price> stream_read(double bytes) const override { return Price{bytes / 1000e9 * 1e6, Provenance::measured}; }
  std::optional<Price> launches(std::int64_t kernels) const override {
    if (!with_launch) return std::nullopt;
    return Price{5.0 * static_cast<double>(kernels), Provenance::measured};
  }
};

workload::DecodeStep llama70b(std::int64_t batch) {
  auto m = workload::read_model_config(fs::path(INTERPROBE_SOURCE_DIR) / "examples/models/llama-3.1-70b.json");
  workload::StepParams p;
  p.tp = 8;
  p.batch = batch;
  p.context_tokens = 4096;
  return workload::decode_step(m, p);
}

double category(const StepEstimate& e, Category c) { return e.categories.at(static_cast<std::size_t>(c)).us; }

}  // namespace

TEST(StepPricing, Llama70bAtTp8Batch1IsPricedCategoryByCategory) {
  HandPrices prices;
  auto e = price_step(llama70b(1), prices, 30000.0);
  // 161 all-reduces of 16,384 B: 20 µs latency + 1.6384 µs bandwidth each; the logits gather of
  // 256,512 B is half an all-reduce: (20 + 25.6512) / 2 = 22.8256 µs, 20 of them latency.
  EXPECT_NEAR(category(e, Category::communication_latency), 161 * 20.0 + 20.0, 1e-9);
  EXPECT_NEAR(category(e, Category::communication_bandwidth), 161 * 1.6384 + 2.8256, 1e-9);
  // M = 1 is 1 FLOP/byte, below the ridge: every GEMM streams its 17,375,428,608 weight bytes at 1e12 B/s.
  EXPECT_NEAR(category(e, Category::gemm_memory_bound), 17375.428608, 1e-6);
  EXPECT_DOUBLE_EQ(category(e, Category::gemm_compute_bound), 0);
  EXPECT_NEAR(category(e, Category::cache_reads), 167.77216, 1e-9);  // 80 × 4096 × 2 × 128 × 2 B
  // 80 layers × 9 kernels + 162 for collectives + 4 per step = 886 launches × 5 µs.
  EXPECT_NEAR(category(e, Category::launch_overhead), 886 * 5.0, 1e-9);
  double total = 3240 + 266.608 + 17375.428608 + 167.77216 + 4430;
  EXPECT_NEAR(e.modeled_us, total, 1e-6);
  EXPECT_NEAR(e.tokens_per_s, 1e6 / total, 1e-9);
  ASSERT_TRUE(e.bottleneck);
  EXPECT_EQ(*e.bottleneck, Category::gemm_memory_bound);
  EXPECT_NEAR(*e.residual_us, 30000 - total, 1e-6);
  // The launch count and the gather's halving are the model's, like the GEMM counts: the step is
  // as good as its worst price, here the interpolated GEMMs.
  EXPECT_EQ(e.provenance, Provenance::interpolated);
  EXPECT_TRUE(e.not_priced.empty());
}

TEST(StepPricing, AtBatch128TheGemmsCrossTheRidgeAndAllReduceBandwidthLeads) {
  HandPrices prices;
  auto e = price_step(llama70b(128), prices);
  // 128 FLOP/byte >= 100: compute-bound at 1e14 FLOP/s, 2 × 128 FLOP per weight.
  double params_per_rank = 80.0 * (1280.0 * 8192 + 8192.0 * 1024 + 7168.0 * 8192 + 8192.0 * 3584) + 16032.0 * 8192;
  EXPECT_NEAR(category(e, Category::gemm_compute_bound), 2 * 128 * params_per_rank / 1e14 * 1e6, 1e-6);
  EXPECT_DOUBLE_EQ(category(e, Category::gemm_memory_bound), 0);
  // 161 all-reduces of 2 MiB at 10 GB/s (209.7152 µs beyond the floor each) and the gather of
  // 32,833,536 B ((20 + 3283.3536) / 2 − 20) now outweigh them: communication bandwidth is the bottleneck.
  EXPECT_NEAR(category(e, Category::communication_bandwidth), 161 * 209.7152 + 1631.6768, 1e-6);
  EXPECT_EQ(*e.bottleneck, Category::communication_bandwidth);
  EXPECT_FALSE(e.residual_us);
}

TEST(StepPricing, WithoutGemmsOrAllReducesNothingIsRankedAndTheMissingAreNamed) {
  HandPrices no_gemms;
  no_gemms.with_gemms = false;
  auto e = price_step(llama70b(1), no_gemms);
  EXPECT_FALSE(e.bottleneck);
  ASSERT_FALSE(e.not_priced.empty());
  EXPECT_NE(e.not_priced[0].find("interprobe compute"), std::string::npos);
  EXPECT_FALSE(e.categories[static_cast<std::size_t>(Category::gemm_memory_bound)].priced);

  HandPrices no_allreduce;
  no_allreduce.with_allreduce = false;
  auto f = price_step(llama70b(1), no_allreduce);
  EXPECT_FALSE(f.bottleneck);
  EXPECT_NE(f.not_priced[0].find("no all-reduce measured at 8 ranks"), std::string::npos);
  EXPECT_EQ(f.provenance, Provenance::interpolated);  // of what was priced; the missing are listed
}

TEST(StepPricing, Tp1NeedsNoCommunication) {
  auto m = workload::read_model_config(fs::path(INTERPROBE_SOURCE_DIR) / "examples/models/mixtral-8x7b.json");
  HandPrices prices;
  prices.with_allreduce = false;
  prices.with_launch = false;
  auto e = price_step(workload::decode_step(m, workload::StepParams{}), prices);
  ASSERT_TRUE(e.bottleneck);
  EXPECT_EQ(*e.bottleneck, Category::gemm_memory_bound);
  EXPECT_DOUBLE_EQ(category(e, Category::communication_latency), 0);
  ASSERT_EQ(e.not_priced.size(), 1u);  // the launch floor
}
