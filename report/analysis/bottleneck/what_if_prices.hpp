#pragma once
// Prices for what-ifs: a report's prices with one part replaced.
//
// The "P2P on" what-if: where the report's all-reduces ran between GPUs that cannot reach each
// other peer to peer (NVML says so for a pair, or the measured P2P copy was staged), the decode
// step priced again with all-reduces from published NCCL numbers for the same topology with P2P
// on. Every price from the table is `assumed`; a topology the table has no row for is not priced,
// and the note says what to measure instead.
#include <optional>
#include <string>

#include "report/analysis/bottleneck/step_pricing.hpp"
#include "model/report.hpp"

namespace interprobe::bottleneck {

// Published NCCL all-reduce with P2P on, as an alpha-beta curve:
// t(S) = small_us + S x 2(n-1)/n / busbw.
struct PublishedP2pAllreduce {
  const char* interconnect;  // "pcie": no NVLink between the GPUs
  std::int64_t gpus;
  double small_us;    // 256 B .. 64 KiB, where the time is flat
  double busbw_gbps;  // large messages
  const char* basis;
};

// Why the measured all-reduces ran without P2P, or nullopt when nothing says they did (P2P
// works, or the report cannot tell).
std::optional<std::string> p2p_missing_reason(const report::Report& report);

// The published row for `ranks` GPUs joined by the report's interconnect, or null.
const PublishedP2pAllreduce* published_p2p_allreduce(const report::Report& report, std::int64_t ranks);

// `measured`, with its all-reduces replaced by the published P2P-on curve (assumed).
class P2pOnPrices : public ForwardingPrices {
 public:
  P2pOnPrices(const PriceSource& measured, const PublishedP2pAllreduce& row) : ForwardingPrices(measured), row_(row) {}
  std::optional<Price> all_reduce(std::int64_t bytes, std::int64_t ranks) const override;
  std::optional<double> all_reduce_floor_us(std::int64_t ranks) const override;

 private:
  const PublishedP2pAllreduce& row_;
};

// CUDA graphs: `measured`, with each kernel launch at the per-kernel cost the engine measured
// for a chain replayed from a captured graph (or the assumed one, for an assumed eager target).
class GraphLaunchPrices : public ForwardingPrices {
 public:
  GraphLaunchPrices(const PriceSource& measured, double graph_launch_us, Provenance graph_provenance = Provenance::measured)
      : ForwardingPrices(measured), graph_us_(graph_launch_us), graph_provenance_(graph_provenance) {}
  // The kernels at the graph's cost; the per-step host cost (what the source prices for zero
  // kernels: the engine's scheduler, when assumed) stays, graphs do not remove it.
  std::optional<Price> launches(std::int64_t kernels) const override {
    auto fixed = ForwardingPrices::launches(0);
    double fixed_us = fixed ? fixed->us : 0;
    return Price{graph_us_ * static_cast<double>(kernels) + fixed_us,
                 fixed_us > 0 ? worst(graph_provenance_, fixed->provenance) : graph_provenance_};
  }

 private:
  double graph_us_;
  Provenance graph_provenance_;
};

}  // namespace interprobe::bottleneck
