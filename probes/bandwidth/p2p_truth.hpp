#pragma once
// Is P2P between two GPUs real? Decided from measurements, not from what the driver claims.
#include <string>
#include <vector>

#include "model/bandwidth.hpp"

namespace interprobe {

// For every src -> dst pair with a peer-access claim: p2p (peer access on and faster than
// staging, or direct-path latency), claimed_but_staged (peer access on, but bandwidth and
// latency look like a copy through host memory), staged (no peer access), corrupt (a checked
// copy between them delivered wrong data). Uses the p2p_write_ce and p2p_off sweeps.
struct PeerClaimInput {
  std::string src, dst;
  bool can_access_peer = false;
};
std::vector<report::P2pPairTruth> classify_p2p_pairs(const std::vector<PeerClaimInput>& claims,
                                                     const std::vector<report::BandwidthSweep>& sweeps);

// Above this latency a "direct" path behaves like staging (reference: NVLink/PCIe P2P
// 1.4-2.3 us, P2P off 11-22 us).
inline constexpr double kStagedLatencyUs = 8.0;

}  // namespace interprobe
