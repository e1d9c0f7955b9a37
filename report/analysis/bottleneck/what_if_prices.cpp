#include "report/analysis/bottleneck/what_if_prices.hpp"

#include <array>

#include <fmt/format.h>

namespace interprobe::bottleneck {

namespace {

constexpr std::array<PublishedP2pAllreduce, 1> kPublished{{
    {"pcie", 8, 24, 39,
     "8x RTX PRO 6000 on bare metal, PCIe Gen5, P2P on: 256 B-64 KiB in ~24 us, busbw 37-41 GB/s (community "
     "nccl-tests numbers)"},
}};

bool p2p_ok(const std::optional<report::P2pCapability>& c) { return c && *c == report::P2pCapability::ok; }

}  // namespace

std::optional<std::string> p2p_missing_reason(const report::Report& r) {
  if (r.bandwidth)
    for (const auto& p : r.bandwidth->p2p_pairs)
      if (p.truth == report::P2pTruth::staged || p.truth == report::P2pTruth::claimed_but_staged)
        return fmt::format("the measured copy {} -> {} went through host memory ({})", p.src, p.dst, report::to_string(p.truth));
  if (!r.topology) return std::nullopt;
  for (const auto& pair : r.topology->gpu_pairs)
    if (pair.p2p && pair.nvlink_count == 0 && (pair.p2p->read || pair.p2p->write) && !p2p_ok(pair.p2p->read) &&
        !p2p_ok(pair.p2p->write))
      return fmt::format("{} no P2P between GPU {} and GPU {} ({})",
                         r.topology->nvml_source ? "NVML reports" : "the report records (NVML was not used)",
                         pair.a_index, pair.b_index,
                         report::to_string(pair.p2p->write ? *pair.p2p->write : *pair.p2p->read));
  return std::nullopt;
}

const PublishedP2pAllreduce* published_p2p_allreduce(const report::Report& r, std::int64_t ranks) {
  if (!r.topology || r.topology->gpu_pairs.empty()) return nullptr;
  for (const auto& pair : r.topology->gpu_pairs)
    if (pair.nvlink_count > 0) return nullptr;  // NVLinked GPUs: no PCIe row applies
  for (const auto& row : kPublished)
    if (row.gpus == ranks && std::string_view(row.interconnect) == "pcie") return &row;
  return nullptr;
}

std::optional<Price> P2pOnPrices::all_reduce(std::int64_t bytes, std::int64_t ranks) const {
  double n = static_cast<double>(ranks);
  double us = row_.small_us + static_cast<double>(bytes) * 2 * (n - 1) / n / (row_.busbw_gbps * 1e3);
  return Price{us, Provenance::assumed};
}

std::optional<double> P2pOnPrices::all_reduce_floor_us(std::int64_t) const { return row_.small_us; }

}  // namespace interprobe::bottleneck
