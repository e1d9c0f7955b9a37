// Findings from the `collective` section: hung and wrong all-reduces, failed variants, and what
// turning P2P off did to bus bandwidth and latency. One finding per cause: the sweeps it touched
// are its `affected` list ("nccl default 8 ranks float"), their numbers lists in the evidence.
#include <cstdint>
#include <functional>

#include <fmt/format.h>

#include "common/units.hpp"
#include "report/analysis/findings.hpp"

namespace interprobe::analysis {

namespace {

using report::AllreduceStatus;
using report::AllreduceSweep;
using report::AllreduceVariant;
using report::Finding;
using report::Severity;
using report::Value;
using report::ValueList;

std::string label(const AllreduceSweep& s) {
  return fmt::format("{} {} {} ranks {}", to_string(s.backend), to_string(s.variant), s.ranks, to_string(s.dtype));
}

std::vector<const AllreduceSweep*> select(const std::vector<AllreduceSweep>& sweeps,
                                          const std::function<bool(const AllreduceSweep&)>& keep) {
  std::vector<const AllreduceSweep*> out;
  for (const auto& s : sweeps)
    if (keep(s)) out.push_back(&s);
  return out;
}

// "(nccl default 2 ranks float)" for one sweep, "(3 sweeps)" for more: the list is in `affected`.
std::string which(const std::vector<const AllreduceSweep*>& sweeps) {
  return sweeps.size() == 1 ? label(*sweeps.front()) : fmt::format("{} sweeps", sweeps.size());
}

void hung(const std::vector<AllreduceSweep>& sweeps, std::vector<Finding>& out) {
  auto affected = select(sweeps, [](const auto& s) { return s.status == AllreduceStatus::hung; });
  if (affected.empty()) return;
  Finding f = make_finding(
      "collective.allreduce_hung", Severity::fail,
      fmt::format("all-reduce hung at {} bytes ({})", affected.front()->hung_at_bytes.value_or(-1), which(affected)),
      "the collective was aborted after the watchdog's timeout. Rerun with --variant p2p-off: if that completes, "
      "peer-to-peer traffic between the GPUs is not arriving; hangs of this kind were fixed by the host's IOMMU setting "
      "(intel_iommu=off or iommu=pt) or by disabling ACS on the PCIe switches; in a VM check that the hypervisor "
      "exposes the GPUs' P2P clique");
  ValueList bytes, timeouts;
  for (const auto* s : affected) {
    f.affected.push_back(label(*s));
    bytes.push_back(optional_value(s->hung_at_bytes));
    timeouts.push_back(Value(s->timeout_s));
  }
  f.evidence = {{"hung_at_bytes", bytes}, {"timeout_s", timeouts}};
  out.push_back(std::move(f));
}

void wrong(const std::vector<AllreduceSweep>& sweeps, std::vector<Finding>& out) {
  auto affected = select(sweeps, [](const auto& s) { return s.summary.wrong_elements_total > 0; });
  if (affected.empty()) return;
  std::int64_t total = 0, first_bytes = -1;
  ValueList per_sweep, smallest;
  for (const auto* s : affected) {
    std::int64_t sweep_first = -1;
    for (const auto& p : s->points)
      if (p.wrong_elements > 0 && (sweep_first < 0 || p.bytes < sweep_first)) sweep_first = p.bytes;
    if (first_bytes < 0 || (sweep_first >= 0 && sweep_first < first_bytes)) first_bytes = sweep_first;
    total += s->summary.wrong_elements_total;
    per_sweep.push_back(Value(s->summary.wrong_elements_total));
    smallest.push_back(Value(sweep_first));
  }
  Finding f = make_finding(
      "collective.allreduce_wrong", Severity::fail,
      fmt::format("all-reduce returned wrong sums: {} elements, from {} bytes up ({})", total, first_bytes, which(affected)),
      "data is corrupted on the way: every input was chosen so the sum is exact. Rerun with --variant p2p-off; if that "
      "is clean, peer-to-peer transfers are unsafe here (set NCCL_P2P_DISABLE=1 for workloads until the IOMMU/ACS setup "
      "or the VM's P2P configuration is fixed)");
  for (const auto* s : affected) f.affected.push_back(label(*s));
  f.evidence = {{"wrong_elements", per_sweep}, {"smallest_wrong_bytes", smallest}};
  out.push_back(std::move(f));
}

void failed(const std::vector<AllreduceSweep>& sweeps, std::vector<Finding>& out) {
  auto affected = select(sweeps, [](const auto& s) { return s.status == AllreduceStatus::failed; });
  if (affected.empty()) return;
  Finding f = make_finding(
      "collective.sweep_failed", Severity::warn, fmt::format("all-reduce sweep failed ({})", which(affected)),
      "read the reason; a variant that fails alone (p2p-off, shm-off) usually means NCCL found no other transport");
  ValueList reasons;
  for (const auto* s : affected) {
    f.affected.push_back(label(*s));
    reasons.push_back(optional_value(s->reason));
  }
  f.evidence = {{"reason", reasons}};
  out.push_back(std::move(f));
}

// One comparison of the default sweep with the p2p_off sweep of the same backend, type and ranks.
struct P2pComparison {
  const AllreduceSweep* on;
  const AllreduceSweep* off;
};

void add_comparisons(const char* id, Severity severity, std::string title, const char* remedy,
                     const std::vector<P2pComparison>& pairs, std::vector<Finding>& out) {
  if (pairs.empty()) return;
  Finding f = make_finding(id, severity, std::move(title), remedy);
  ValueList with_p2p, without, latency_with, latency_without;
  for (const auto& [on, off] : pairs) {
    f.affected.push_back(label(*on));
    with_p2p.push_back(optional_value(on->summary.plateau_busbw_gbps));
    without.push_back(optional_value(off->summary.plateau_busbw_gbps));
    latency_with.push_back(optional_value(on->summary.latency_us));
    latency_without.push_back(optional_value(off->summary.latency_us));
  }
  f.evidence = {{"busbw_default_gbps", with_p2p},
                {"busbw_p2p_off_gbps", without},
                {"latency_default_us", latency_with},
                {"latency_p2p_off_us", latency_without}};
  out.push_back(std::move(f));
}

// default vs p2p_off for the same backend, type and ranks: what P2P buys (or costs).
void p2p_effect(const std::vector<AllreduceSweep>& sweeps, std::vector<Finding>& out) {
  std::vector<P2pComparison> slower, gain;
  for (const auto& on : sweeps) {
    if (on.variant != AllreduceVariant::default_ || !on.summary.plateau_busbw_gbps) continue;
    for (const auto& off : sweeps) {
      if (off.variant != AllreduceVariant::p2p_off || off.backend != on.backend || off.dtype != on.dtype ||
          off.ranks != on.ranks || !off.summary.plateau_busbw_gbps)
        continue;
      (*off.summary.plateau_busbw_gbps > 1.1 * *on.summary.plateau_busbw_gbps ? slower : gain).push_back({&on, &off});
    }
  }
  auto numbers = [](const P2pComparison& c) {
    return std::pair{*c.on->summary.plateau_busbw_gbps, *c.off->summary.plateau_busbw_gbps};
  };
  if (!slower.empty()) {
    auto [with_p2p, without] = numbers(slower.front());
    add_comparisons("collective.p2p_slower", Severity::warn,
                    fmt::format("all-reduce is faster with P2P off: {} vs {} GB/s busbw{}", format_gbps(without),
                                format_gbps(with_p2p), slower.size() > 1 ? fmt::format(" (and {} more)", slower.size() - 1) : ""),
                    "the P2P path NCCL picks is worse than staging through the host: check the bandwidth probe's P2P "
                    "truth per GPU pair (claimed_but_staged) and the PCIe topology; NCCL_P2P_DISABLE=1 is faster here "
                    "meanwhile",
                    slower, out);
  }
  if (!gain.empty()) {
    auto [with_p2p, without] = numbers(gain.front());
    add_comparisons("collective.p2p_gain", Severity::info,
                    fmt::format("P2P gives {:.2f}x all-reduce bus bandwidth: {} GB/s vs {} GB/s with P2P off{}",
                                without > 0 ? with_p2p / without : 0.0, format_gbps(with_p2p), format_gbps(without),
                                gain.size() > 1 ? fmt::format(" (and {} more)", gain.size() - 1) : ""),
                    "none needed; keep P2P enabled (a VM without the P2P clique capability would run at the p2p-off "
                    "number)",
                    gain, out);
  }
}

}  // namespace

void rule_collective(const report::Report& r, std::vector<Finding>& out) {
  if (!r.collective) return;
  const auto& sweeps = r.collective->allreduce;
  hung(sweeps, out);
  wrong(sweeps, out);
  failed(sweeps, out);
  p2p_effect(sweeps, out);
}

}  // namespace interprobe::analysis
