#pragma once
// The facts a policy can name: what a report says that is not a measured number (machine type,
// attachment, NUMA exposure, P2P verdicts, link training, the bottleneck verdict), flattened to
// paths like the metrics view's, so both are selected with the same globs:
//   virtualization/machine_type                   "q35"
//   virtualization/gpus/<bdf>/numa_exposed        true
//   topology/gpus/<index>/link_downtrained        false
//   bandwidth/p2p_truth/<src>-><dst>/truth        "p2p"
//   bottlenecks/<model>/tp<N>/b<B>/bottleneck     "communication_latency"
// A value the report does not know (null) gives no row: a check on it is skipped, not passed.
#include <string>
#include <vector>

#include "model/report.hpp"
#include "report/policy/policy.hpp"

namespace interprobe::policy {

struct FactRow {
  std::string path;
  Literal value;
};

std::vector<FactRow> facts_of(const report::Report& report);

// The sections a fact path can start with (a selector outside them is a policy error).
const std::vector<std::string>& fact_sections();

}  // namespace interprobe::policy
