#include "report/analysis/bottleneck/step_pricing.hpp"

#include <fmt/format.h>

namespace interprobe::bottleneck {

namespace {

class Tally {
 public:
  Tally() {
    for (int c = 0; c <= static_cast<int>(Category::launch_overhead); ++c)
      times_.push_back({static_cast<Category>(c), 0.0, Provenance::measured, true});
  }
  void add(Category c, double us, Provenance p) {
    auto& t = times_[static_cast<std::size_t>(c)];
    t.us += us;
    t.provenance = worst(t.provenance, p);
  }
  void missing(Category c, std::string why) {
    auto& t = times_[static_cast<std::size_t>(c)];
    if (t.priced) reasons_.push_back(fmt::format("{}: {}", report::to_string(c), why));
    t.priced = false;
    t.provenance = Provenance::not_measured;
  }
  const CategoryTime& operator[](Category c) const { return times_[static_cast<std::size_t>(c)]; }
  std::vector<CategoryTime> times_;
  std::vector<std::string> reasons_;
};

void price_gemms(const workload::DecodeStep& step, const PriceSource& prices, Tally& tally) {
  for (const auto& op : step.gemms) {
    auto price = prices.gemm(op);
    if (!price) {
      tally.missing(Category::gemm_memory_bound, "no measured GEMM curve (run `interprobe compute`)");
      tally.missing(Category::gemm_compute_bound, "no measured GEMM curve (run `interprobe compute`)");
      return;
    }
    // Arithmetic intensity over the weights, the bytes that dominate at decode sizes.
    double intensity = op.flops() / op.weight_bytes();
    auto ridge = prices.ridge_flop_per_byte(op.dtype);
    bool compute_bound = ridge && intensity >= *ridge;
    tally.add(compute_bound ? Category::gemm_compute_bound : Category::gemm_memory_bound, price->us * op.count,
              ridge ? price->provenance : worst(price->provenance, Provenance::extrapolated));
  }
}

void price_collectives(const workload::DecodeStep& step, const PriceSource& prices, Tally& tally) {
  const std::int64_t ranks = step.params.tp;
  for (const auto& c : step.collectives) {
    // A ring all-gather is the second half of a ring all-reduce of the same size.
    bool gather = c.kind == workload::CollectiveKind::all_gather;
    auto price = prices.all_reduce(c.bytes, ranks);
    auto floor = prices.all_reduce_floor_us(ranks);
    if (!price || !floor) {
      std::string why = fmt::format("no all-reduce measured at {} ranks (run `interprobe allreduce`)", ranks);
      tally.missing(Category::communication_latency, why);
      tally.missing(Category::communication_bandwidth, why);
      return;
    }
    double us = gather ? price->us / 2 : price->us;
    double latency = std::min(us, *floor);
    // The halving is the model's (as 2 all-reduces per layer is), not a reading outside the data.
    Provenance p = price->provenance;
    tally.add(Category::communication_latency, latency * static_cast<double>(c.count), p);
    tally.add(Category::communication_bandwidth, (us - latency) * static_cast<double>(c.count), p);
  }
}

}  // namespace

StepEstimate price_step(const workload::DecodeStep& step, const PriceSource& prices,
                        std::optional<double> observed_step_us) {
  Tally tally;
  price_gemms(step, prices, tally);
  price_collectives(step, prices, tally);
  if (step.cache_bytes() > 0) {
    if (auto read = prices.stream_read(step.cache_bytes()))
      tally.add(Category::cache_reads, read->us, read->provenance);
    else tally.missing(Category::cache_reads, "no measured memory bandwidth (run `interprobe compute`)");
  }
  // The floor is a measured price like an all-reduce's; the count is the model's, as for the GEMMs.
  if (auto launch = prices.launches(step.kernels_estimated))
    tally.add(Category::launch_overhead, launch->us, launch->provenance);
  else tally.missing(Category::launch_overhead, "no measured launch floor (run `interprobe compute`)");

  StepEstimate e;
  e.batch = step.params.batch;
  e.categories = tally.times_;
  e.not_priced = tally.reasons_;
  const CategoryTime* largest = nullptr;
  for (const auto& c : e.categories) {
    if (!c.priced) continue;
    e.modeled_us += c.us;
    e.provenance = worst(e.provenance, c.provenance);
    if (!largest || c.us > largest->us) largest = &c;
  }
  bool ranks = tally[Category::gemm_memory_bound].priced && tally[Category::communication_latency].priced;
  if (step.collectives.empty()) ranks = tally[Category::gemm_memory_bound].priced;  // TP 1: no communication
  if (ranks && largest && largest->us > 0) e.bottleneck = largest->category;
  if (e.modeled_us > 0) e.tokens_per_s = static_cast<double>(step.params.batch) / (e.modeled_us * 1e-6);
  if (observed_step_us) {
    e.observed_us = observed_step_us;
    e.residual_us = *observed_step_us - e.modeled_us;
  }
  return e;
}

}  // namespace interprobe::bottleneck
