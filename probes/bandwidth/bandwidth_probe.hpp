#pragma once
// The `bandwidth` probe: host sweeps and CUDA sweeps into report.bandwidth, point by point.
#include <memory>
#include <string>
#include <vector>

#include "probes/bandwidth/page_backing.hpp"
#include "probes/bandwidth/sweep.hpp"
#include "probes/runner/probe.hpp"

namespace interprobe {

struct BandwidthRequest {
  std::vector<report::BandwidthEngine> engines{report::BandwidthEngine::host, report::BandwidthEngine::cuda};  // in order
  report::BandwidthPlan plan = report::BandwidthPlan::standard;
  SweepOptions sweep;
  unsigned host_threads = 0;       // 0: the CPUs near the buffers, at most 8
  bool host_locked = true;         // also sweep mlock'ed buffers
  bool cuda_every_kind = true;     // SM-kernel variants, pageable, read direction
  bool cuda_both_directions = false;
  // Host staging chunk: halves that stay in L2 (256 KiB) let the draining thread read them from
  // the filling core's cache; 1-4 MiB halves spill and ran at half the memcpy rate here.
  std::uint64_t staged_chunk_bytes = 256u << 10;
  PagePolicy host_pages = PagePolicy::automatic;  // --pages: madvise of host sweep buffers
};

// Plans: quick (run: 4 B..256 MiB, x4 steps, short budgets), standard (4 B..1 GiB), full
// (4 B..4 GiB, every pair both ways).
// (custom is not a plan of its own: it is what the caller sets after changing the sizes).
BandwidthRequest bandwidth_plan(report::BandwidthPlan plan);

// Throws InputError naming the option for values no sweep can use.
void validate_request(const BandwidthRequest& request);

std::unique_ptr<Probe> make_bandwidth_probe(BandwidthRequest request);

}  // namespace interprobe
