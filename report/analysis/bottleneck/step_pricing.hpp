#pragma once
// Prices a decode step (workload/decode_step.hpp) from what a report measured and splits it into
// the categories the ranking compares: communication (latency- and bandwidth-bound parts), GEMMs
// (memory- and compute-bound by the measured roofline), KV-cache reads, kernel launches. The
// bottleneck is the category whose removal gains the most tokens/s — the largest one, since the
// step is their sum — and it is only named when communication and GEMMs were both priced.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/analysis/bottleneck/measured_curve.hpp"
#include "report/analysis/workload/decode_step.hpp"

namespace interprobe::bottleneck {

struct Price {
  double us = 0;
  Provenance provenance = Provenance::not_measured;
};

// What a report measured, as prices. Each returns nullopt when nothing measured (or assumed on
// request) can price it.
class PriceSource {
 public:
  virtual ~PriceSource() = default;
  // One instance of the GEMM (op.count is applied by the caller).
  virtual std::optional<Price> gemm(const workload::GemmOp& op) const = 0;
  // The compute ceiling over the memory ceiling (FLOP per byte) for the op's weight dtype.
  virtual std::optional<double> ridge_flop_per_byte(workload::WeightDtype dtype) const = 0;
  virtual std::optional<Price> all_reduce(std::int64_t bytes, std::int64_t ranks) const = 0;
  // The all-reduce time of the smallest size measured at `ranks`: the latency part of any size.
  virtual std::optional<double> all_reduce_floor_us(std::int64_t ranks) const = 0;
  virtual std::optional<Price> stream_read(double bytes) const = 0;
  virtual std::optional<Price> launches(std::int64_t kernels) const = 0;
};

// Another source's prices, each passed through: a what-if derives from it and replaces one part.
class ForwardingPrices : public PriceSource {
 public:
  explicit ForwardingPrices(const PriceSource& inner) : inner_(inner) {}
  std::optional<Price> gemm(const workload::GemmOp& op) const override { return inner_.gemm(op); }
  std::optional<double> ridge_flop_per_byte(workload::WeightDtype d) const override { return inner_.ridge_flop_per_byte(d); }
  std::optional<Price> all_reduce(std::int64_t bytes, std::int64_t ranks) const override {
    return inner_.all_reduce(bytes, ranks);
  }
  std::optional<double> all_reduce_floor_us(std::int64_t ranks) const override { return inner_.all_reduce_floor_us(ranks); }
  std::optional<Price> stream_read(double bytes) const override { return inner_.stream_read(bytes); }
  std::optional<Price> launches(std::int64_t kernels) const override { return inner_.launches(kernels); }

 private:
  const PriceSource& inner_;
};

using Category = report::StepCategory;

struct CategoryTime {
  Category category = Category::communication_latency;
  double us = 0;
  Provenance provenance = Provenance::measured;  // the worst of its parts
  bool priced = true;                            // false: some part had no price
};

struct StepEstimate {
  std::int64_t batch = 0;
  std::vector<CategoryTime> categories;  // every category, in enum order
  double modeled_us = 0;                 // sum of the priced categories
  double tokens_per_s = 0;               // batch / modeled step
  Provenance provenance = Provenance::measured;
  std::optional<Category> bottleneck;  // null when communication or GEMMs are not priced
  std::vector<std::string> not_priced;  // categories and why
  std::optional<double> observed_us;    // from --itl-ms or tokens/s
  std::optional<double> residual_us;    // observed − modeled: what the model cannot explain
};

StepEstimate price_step(const workload::DecodeStep& step, const PriceSource& prices,
                        std::optional<double> observed_step_us = std::nullopt);

}  // namespace interprobe::bottleneck
