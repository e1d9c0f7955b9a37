#include "cli/fleet_ranks.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "common/cpuid.hpp"
#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/progress.hpp"
#include "common/stopwatch.hpp"
#include "common/text.hpp"
#include "probes/collective/collective_probe.hpp"
#include "probes/collective/mpi_world.hpp"
#include "model/json.hpp"

namespace interprobe::cli {

namespace {

using Blob = std::vector<std::byte>;

Blob blob_of(const std::string& text) {
  Blob b(text.size());
  std::memcpy(b.data(), text.data(), text.size());
  return b;
}

std::string text_of(const Blob& b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }

// One node's message to rank 0: "<kind>\n<payload>", kind report (payload: its JSON), failed
// (payload: why) or idle (a rank whose node another rank probed).
Blob node_message(const NodeOutcome& outcome) {
  if (!outcome.report) return blob_of("failed\n" + outcome.failure);
  std::string json = report::to_json_text(*outcome.report, -1);
  if (json.size() > kMaxNodeReportBytes)
    return blob_of(fmt::format("failed\nits report is {} bytes, over the {} bytes a node may send", json.size(), kMaxNodeReportBytes));
  return blob_of("report\n" + json);
}

void read_node_message(const std::optional<Blob>& message, int rank, fleet::FleetNode& node) {
  if (!message) {
    node.failure = fmt::format("rank {} sent more than {} bytes (or the fleet's total passed {} bytes)", rank,
                               kMaxNodeReportBytes + 64, collective::kMaxGatherTotalBytes);
    return;
  }
  const std::string text = text_of(*message);
  const auto newline = text.find('\n');
  const std::string kind = text.substr(0, newline);
  const std::string payload = newline == std::string::npos ? "" : text.substr(newline + 1);
  if (kind == "failed") {
    node.failure = payload;
  } else if (kind == "report") {
    try {
      node.report = report::parse_report_text(payload, fmt::format("the report of rank {}", rank));
      node.status = fleet::NodeStatus::ok;
    } catch (const InputError& e) {
      node.failure = e.what();
    }
  } else {
    node.failure = fmt::format("rank {} sent '{}', which this interprobe does not know (ranks of two builds?)", rank,
                               printable(kind.substr(0, 40)));
  }
}

// Rank 0 groups the ranks by node identity (first seen first) and names each node's prober.
std::vector<fleet::FleetNode> group_nodes(const std::vector<std::optional<Blob>>& identities) {
  std::vector<fleet::FleetNode> nodes;
  std::map<std::string, std::size_t> index;
  for (std::size_t rank = 0; rank < identities.size(); ++rank) {
    std::string id = identities[rank] ? text_of(*identities[rank]) : fmt::format("rank {} (identity too long)", rank);
    auto [it, added] = index.try_emplace(id, nodes.size());
    if (added) {
      fleet::FleetNode node;
      node.name = id.substr(0, id.find('\n'));
      nodes.push_back(std::move(node));
    }
    nodes[it->second].ranks.push_back(static_cast<std::int64_t>(rank));
  }
  // Two hosts of one name (clones) stay two nodes: their boot ids differ; name them apart.
  std::map<std::string, int> seen;
  for (auto& n : nodes)
    if (int k = seen[n.name]++; k > 0) n.name += fmt::format(" #{}", k + 1);
  return nodes;
}

Blob seconds_blob(double s) {
  Blob b(sizeof s);
  std::memcpy(b.data(), &s, sizeof s);
  return b;
}

double seconds_of(const std::optional<Blob>& b) {
  double s = 0;
  if (b && b->size() == sizeof s) std::memcpy(&s, b->data(), sizeof s);
  return s;
}

// Every rank takes part; rank 0 keeps the sweeps: MPI over host buffers, then NCCL with one GPU
// per rank when every rank can start it (make_nccl_backend agrees on that across the ranks and
// throws UnsupportedError on all of them alike). A failure on one rank only would leave the
// others inside a collective: the job ends instead.
void measure_allreduce(collective::RankGroup& world, std::uint64_t max_message_bytes, fleet::FleetCollective& out) {
  HostRoot live;
  const RecordedCpuid cpuid = RecordedCpuid::unknown("not read: the fleet's all-reduce reads no CPUID");
  ProbeContext ctx{live, cpuid, Progress::disabled()};
  report::Report scratch;
  auto sweep = [&](report::AllreduceBackend backend, const collective::SweepPlan& plan) {
    collective::CollectiveRequest request;
    request.backend = backend;
    request.plan = plan;
    try {
      collective::make_allreduce_probe(request, world)->run(ctx, scratch);
    } catch (const InterruptedError&) {
      throw;
    } catch (const UnsupportedError& e) {
      return std::string(e.what());
    } catch (const std::exception& e) {
      world.abort_all(fmt::format("the fleet's {} all-reduce failed: {}", report::to_string(backend), e.what()), 3);
    }
    return std::string();
  };
  const std::string no_mpi = sweep(report::AllreduceBackend::mpi, collective::run_mpi_plan(max_message_bytes));
  const std::string no_nccl = sweep(report::AllreduceBackend::nccl, collective::run_plan(max_message_bytes));
  if (world.process_rank() != 0) return;
  out.section = scratch.collective;
  if (!out.section) out.reason = no_mpi.empty() ? "the sweeps recorded nothing" : no_mpi;
  out.notes.push_back(no_nccl.empty() ? "NCCL across the ranks: one GPU per rank; its transports are NCCL's own (from its log)"
                                      : "NCCL across the ranks: not measured: " + no_nccl);
}

std::string transport_note(int nodes) {
  return fmt::format("MPI does not report the transport it chose; inferred from placement: the ranks span {} node(s) "
                     "(processes sharing memory), so {}",
                     nodes, nodes > 1 ? "shared memory within a node and the network between nodes" : "shared memory only");
}

}  // namespace

std::string node_identity(int rank, bool rank_as_node) {
  if (rank_as_node) return fmt::format("rank {}", rank);
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown-host");
  // The boot id tells two machines of one host name (cloned images) apart. Read from the live
  // kernel: it names the process's machine, whatever --root replays.
  std::string boot_id;
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::getline(in, boot_id);
  return fmt::format("{}\n{}", printable(host), printable(boot_id.substr(0, 64)));
}

std::optional<fleet::FleetReport> gather_fleet(collective::RankGroup& world, const FleetPlan& plan,
                                               const std::function<NodeOutcome()>& probe_node) {
  const int rank = world.process_rank();
  const bool first = rank == 0;
  // 1. Which rank probes which node: the lowest rank of each identity.
  auto identities = world.gather_to_first(blob_of(node_identity(rank, plan.rank_as_node)), 512);
  std::vector<fleet::FleetNode> nodes;
  Blob probers(static_cast<std::size_t>(world.process_count()), std::byte{0});
  if (first) {
    nodes = group_nodes(identities);
    for (const auto& n : nodes) probers[static_cast<std::size_t>(n.ranks.front())] = std::byte{1};
  }
  probers = world.broadcast(probers);
  const bool prober = static_cast<std::size_t>(rank) < probers.size() && probers[static_cast<std::size_t>(rank)] == std::byte{1};

  // 2. Each node probed once; the node's other ranks go straight on to wait in the gather.
  NodeOutcome outcome;
  Stopwatch probing;
  if (prober) outcome = probe_node();
  const double probe_s = prober ? probing.elapsed_s() : 0;

  // 3. Everyone here (an idle wait for the slowest node), then the reports, timed on their own.
  auto probe_seconds = world.gather_to_first(seconds_blob(probe_s), sizeof(double));
  Stopwatch gathering;
  auto messages = world.gather_to_first(prober ? node_message(outcome) : blob_of("idle\n"), kMaxNodeReportBytes + 64);
  const double gather_s = gathering.elapsed_s();

  // 4. The all-reduce across every rank.
  fleet::FleetReport fleet;
  fleet.collective.ranks = world.process_count();
  fleet.collective.nodes = world.nodes();
  Stopwatch sweeping;
  if (world.process_count() < 2) fleet.collective.reason = "one rank: an all-reduce across the fleet needs two or more";
  else if (!plan.measure_allreduce) fleet.collective.reason = plan.no_allreduce_reason;
  else measure_allreduce(world, plan.max_message_bytes, fleet.collective);
  fleet.timing.cross_node_allreduce_s = sweeping.elapsed_s();
  if (!first) return std::nullopt;

  fleet.ranks = world.process_count();
  fleet.rank_as_node = plan.rank_as_node;
  fleet.timing.gather_s = gather_s;
  for (const auto& s : probe_seconds) fleet.timing.per_node_probes_s = std::max(fleet.timing.per_node_probes_s, seconds_of(s));
  for (auto& node : nodes) {
    const int by = static_cast<int>(node.ranks.front());
    read_node_message(messages[static_cast<std::size_t>(by)], by, node);
  }
  fleet.nodes = std::move(nodes);
  if (fleet.collective.section)
    fleet.collective.notes.insert(fleet.collective.notes.begin(), transport_note(world.nodes()));
  return fleet;
}

}  // namespace interprobe::cli
