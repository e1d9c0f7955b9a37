// Findings from the `collective` section: hung and wrong all-reduces, failed variants, and what
// turning P2P off did to bus bandwidth and latency.
#include <cstdint>

#include <fmt/format.h>

#include "common/units.hpp"
#include "report/analysis/findings.hpp"

namespace interprobe::analysis {

namespace {

using report::AllreduceSweep;
using report::Finding;
using report::Severity;
using report::Value;

std::string label(const AllreduceSweep& s) { return fmt::format("{} {} {} ranks {}", s.backend, s.variant, s.ranks, s.dtype); }

void hung(const AllreduceSweep& s, std::vector<Finding>& out) {
  if (s.status != "hung") return;
  Finding f;
  f.id = "collective.allreduce_hung";
  f.severity = Severity::fail;
  f.title = fmt::format("all-reduce hung at {} bytes ({})", s.hung_at_bytes.value_or(-1), label(s));
  f.evidence = {{"backend", s.backend},       {"variant", s.variant},
                {"dtype", s.dtype},           {"ranks", Value(s.ranks)},
                {"bytes", s.hung_at_bytes ? Value(*s.hung_at_bytes) : Value(nullptr)},
                {"timeout_s", Value(s.timeout_s)}};
  f.remedy = "the collective was aborted after the watchdog's timeout. Rerun with --variant p2p-off: if that completes, "
             "peer-to-peer traffic between the GPUs is not arriving; hangs of this kind were fixed by the host's IOMMU "
             "setting (intel_iommu=off or iommu=pt) or by disabling ACS on the PCIe switches; in a VM check that the "
             "hypervisor exposes the GPUs' P2P clique";
  out.push_back(std::move(f));
}

void wrong(const AllreduceSweep& s, std::vector<Finding>& out) {
  if (s.summary.wrong_total <= 0) return;
  std::int64_t first_bytes = -1;
  for (const auto& p : s.points)
    if (p.wrong > 0 && (first_bytes < 0 || p.bytes < first_bytes)) first_bytes = p.bytes;
  Finding f;
  f.id = "collective.allreduce_wrong";
  f.severity = Severity::fail;
  f.title = fmt::format("all-reduce returned wrong sums: {} elements, from {} bytes up ({})", s.summary.wrong_total,
                        first_bytes, label(s));
  f.evidence = {{"backend", s.backend},
                {"variant", s.variant},
                {"dtype", s.dtype},
                {"wrong_elements", Value(s.summary.wrong_total)},
                {"smallest_wrong_bytes", Value(first_bytes)}};
  f.remedy = "data is corrupted on the way: every input was chosen so the sum is exact. Rerun with --variant p2p-off; "
             "if that is clean, peer-to-peer transfers are unsafe here (set NCCL_P2P_DISABLE=1 for workloads until the "
             "IOMMU/ACS setup or the VM's P2P configuration is fixed)";
  out.push_back(std::move(f));
}

void failed(const AllreduceSweep& s, std::vector<Finding>& out) {
  if (s.status != "failed") return;
  Finding f;
  f.id = "collective.sweep_failed";
  f.severity = Severity::warn;
  f.title = fmt::format("all-reduce sweep failed ({})", label(s));
  f.evidence = {{"backend", s.backend}, {"variant", s.variant}, {"reason", s.reason ? Value(*s.reason) : Value(nullptr)}};
  f.remedy = "read the reason; a variant that fails alone (p2p-off, shm-off) usually means NCCL found no other transport";
  out.push_back(std::move(f));
}

// default vs p2p-off for the same backend, type and ranks: what P2P buys.
void p2p_effect(const std::vector<AllreduceSweep>& sweeps, std::vector<Finding>& out) {
  for (const auto& on : sweeps) {
    if (on.variant != "default" || !on.summary.plateau_busbw_gbps) continue;
    for (const auto& off : sweeps) {
      if (off.variant != "p2p-off" || off.backend != on.backend || off.dtype != on.dtype || off.ranks != on.ranks ||
          !off.summary.plateau_busbw_gbps)
        continue;
      const double with_p2p = *on.summary.plateau_busbw_gbps, without = *off.summary.plateau_busbw_gbps;
      Finding f;
      f.evidence = {{"dtype", on.dtype},
                    {"ranks", Value(on.ranks)},
                    {"busbw_default_gbps", Value(with_p2p)},
                    {"busbw_p2p_off_gbps", Value(without)},
                    {"latency_default_us", on.summary.latency_us ? Value(*on.summary.latency_us) : Value(nullptr)},
                    {"latency_p2p_off_us", off.summary.latency_us ? Value(*off.summary.latency_us) : Value(nullptr)}};
      if (without > 1.1 * with_p2p) {
        f.id = "collective.p2p_slower";
        f.severity = Severity::warn;
        f.title = fmt::format("all-reduce is faster with P2P off: {} vs {} GB/s busbw", format_gbps(without), format_gbps(with_p2p));
        f.remedy = "the P2P path NCCL picks is worse than staging through the host: check the bandwidth probe's P2P truth "
                   "per GPU pair (claimed-but-staged) and the PCIe topology; NCCL_P2P_DISABLE=1 is faster here meanwhile";
      } else {
        f.id = "collective.p2p_gain";
        f.severity = Severity::info;
        f.title = fmt::format("P2P gives {:.2f}x all-reduce bus bandwidth: {} GB/s vs {} GB/s with P2P off",
                              without > 0 ? with_p2p / without : 0.0, format_gbps(with_p2p), format_gbps(without));
        f.remedy = "none needed; keep P2P enabled (a VM without the P2P clique capability would run at the p2p-off number)";
      }
      out.push_back(std::move(f));
    }
  }
}

}  // namespace

void rule_collective(const report::Report& r, std::vector<Finding>& out) {
  if (!r.collective) return;
  for (const auto& s : r.collective->allreduce) {
    hung(s, out);
    wrong(s, out);
    failed(s, out);
  }
  p2p_effect(r.collective->allreduce, out);
}

}  // namespace interprobe::analysis
