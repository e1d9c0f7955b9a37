#include "probes/bandwidth/p2p_truth.hpp"

#include <fmt/format.h>

#include "common/units.hpp"

namespace interprobe {

namespace {

using report::CopyKind;
using report::P2pTruth;

const report::BandwidthSweep* find_sweep(const std::vector<report::BandwidthSweep>& sweeps, CopyKind kind,
                                         const std::string& src, const std::string& dst) {
  for (const auto& s : sweeps)
    if (s.engine == report::BandwidthEngine::cuda && s.kind == kind && s.src == src && s.dst == dst && !s.points.empty())
      return &s;
  return nullptr;
}

}  // namespace

std::vector<report::P2pPairTruth> classify_p2p_pairs(const std::vector<PeerClaimInput>& claims,
                                                     const std::vector<report::BandwidthSweep>& sweeps) {
  std::vector<report::P2pPairTruth> out;
  for (const auto& c : claims) {
    report::P2pPairTruth t;
    t.src = c.src;
    t.dst = c.dst;
    t.peer_access_claimed = c.can_access_peer;
    const auto* on = find_sweep(sweeps, CopyKind::p2p_write_ce, c.src, c.dst);
    const auto* off = find_sweep(sweeps, CopyKind::p2p_off, c.src, c.dst);
    if (on) {
      t.p2p_gbps = on->points.back().gbps;
      t.p2p_latency_us = on->points.front().median_us;
    }
    if (off) {
      t.staged_gbps = off->points.back().gbps;
      t.staged_latency_us = off->points.front().median_us;
    }
    // Corruption on any GPU-to-GPU path of this pair (either direction of a bidirectional run).
    std::optional<P2pTruth> truth;
    for (const auto& s : sweeps) {
      const bool both_ways = s.directions == 2 || s.kind == report::CopyKind::p2p_bidir_ce;
      bool pair = (s.src == c.src && s.dst == c.dst) || (both_ways && s.src == c.dst && s.dst == c.src);
      if (s.engine != report::BandwidthEngine::cuda || !pair || !is_gpu_to_gpu(s.kind)) continue;
      for (const auto& p : s.points)
        if (p.verified == false && !truth) {
          truth = P2pTruth::corrupt;
          t.reason = fmt::format("{} copy of {} delivered wrong data", to_string(s.kind),
                                 format_bytes(static_cast<std::uint64_t>(p.bytes)));
        }
    }
    if (truth) {
      t.truth = *truth;
    } else if (!c.can_access_peer) {
      t.truth = P2pTruth::staged;
      t.reason = "cuDeviceCanAccessPeer says no: copies between them go through host memory";
    } else if (!on) {
      continue;  // claimed, not measured (interrupted or failed): nothing to say
    } else {
      bool slow_start = *t.p2p_latency_us >= kStagedLatencyUs;
      bool like_staging = false;
      if (off && t.staged_gbps && *t.staged_gbps > 0 && t.staged_latency_us && *t.staged_latency_us > 0)
        like_staging = *t.p2p_gbps <= 1.15 * *t.staged_gbps && *t.p2p_latency_us >= 0.7 * *t.staged_latency_us;
      else
        like_staging = slow_start;
      if (like_staging) {
        t.truth = P2pTruth::claimed_but_staged;
        t.reason = fmt::format("peer access is on, but {} GB/s and {} us per small copy look like a copy through host "
                               "memory{}",
                               format_gbps(*t.p2p_gbps), format_us(*t.p2p_latency_us),
                               t.staged_gbps ? fmt::format(" (P2P off: {} GB/s, {} us)", format_gbps(*t.staged_gbps),
                                                           format_us(*t.staged_latency_us))
                                             : "");
      } else {
        t.truth = P2pTruth::p2p;
        t.reason = fmt::format("peer access on: {} GB/s, {} us per small copy", format_gbps(*t.p2p_gbps),
                               format_us(*t.p2p_latency_us));
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace interprobe
