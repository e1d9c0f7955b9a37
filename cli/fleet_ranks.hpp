#pragma once
// `interprobe fleet` across the ranks of an MPI job: which rank probes which node, each node's
// report to rank 0, and the all-reduce across every rank. The analysis is report/fleet/.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "probes/collective/rank_group.hpp"
#include "report/fleet/fleet.hpp"

namespace interprobe::cli {

// Each node's report travels as at most this many bytes of JSON; a larger one is a failed node.
inline constexpr std::size_t kMaxNodeReportBytes = std::size_t{16} << 20;

// What one rank makes of its node: a report, or why there is none.
struct NodeOutcome {
  std::optional<report::Report> report;
  std::string failure;
};

struct FleetPlan {
  bool rank_as_node = false;        // testing: every rank is a node of its own
  bool measure_allreduce = true;    // false: `reason` says why the cross-node sweep is left out
  std::string no_allreduce_reason;
  std::uint64_t max_message_bytes = 0;  // --max-size: the cross-node sweeps end there (0: run's plans)
};

// Every rank calls this with the same plan; `probe_node` runs on one rank per node (the lowest),
// the others wait without spinning. Rank 0 returns the fleet report (nodes, collective, timing;
// not yet analysed); the other ranks return nullopt.
std::optional<fleet::FleetReport> gather_fleet(collective::RankGroup& world, const FleetPlan& plan,
                                               const std::function<NodeOutcome()>& probe_node);

// This process's node: host name and boot id ("rank N" under rank_as_node).
std::string node_identity(int rank, bool rank_as_node);

}  // namespace interprobe::cli
