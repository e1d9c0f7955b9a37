#pragma once
// The `collective` probe: all-reduce sweeps into report.collective.allreduce, one entry per
// variant and element type, written as it goes.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "probes/collective/collective_backend.hpp"
#include "probes/collective/sweep_plan.hpp"
#include "probes/runner/probe.hpp"

namespace interprobe::collective {

struct CollectiveRequest {
  report::AllreduceBackend backend = report::AllreduceBackend::nccl;
  std::vector<report::AllreduceVariant> variants = {report::AllreduceVariant::default_};
  SweepPlan plan;
  // The collectives to sweep, each over the plan; all_reduce goes to report.collective.allreduce,
  // the others to report.collective.sweeps (`interprobe collectives --ops`).
  std::vector<report::CollectiveOp> ops = {report::CollectiveOp::all_reduce};
  // interprobe itself, to measure further NCCL variants in fresh processes; empty: not possible.
  std::string self_executable;
};

using BackendFactory =
    std::function<std::unique_ptr<CollectiveBackend>(RankGroup& group, report::AllreduceVariant variant)>;

// `interprobe allreduce`: `group` is MPI_COMM_WORLD under mpirun, else a SingleProcessGroup
// (it must outlive the probe). Bad requests throw InputError naming the option.
std::unique_ptr<Probe> make_allreduce_probe(CollectiveRequest request, RankGroup& group);
// The same with another source of backends: tests pass test doubles.
std::unique_ptr<Probe> make_allreduce_probe(CollectiveRequest request, RankGroup& group, BackendFactory factory);

// `interprobe run`: NCCL over every GPU of this process when there are two or more, with
// run_plan(); and, when `mpi_world` spans two or more processes (`mpirun -np N interprobe run`,
// this probe on rank 0), the MPI all-reduce across them with run_mpi_plan(). Neither: `unsupported`
// with the reason, where `mpi_absent` says why MPI was not started (empty: no launcher).
// `max_message_bytes` (`run --max-size`; 0: the plans' own) cuts every sweep at that size.
std::unique_ptr<Probe> make_run_collective_probe(RankGroup* mpi_world = nullptr, std::string mpi_absent = {},
                                                 std::uint64_t max_message_bytes = 0);
SweepPlan run_plan(std::uint64_t max_message_bytes = 0);
SweepPlan run_mpi_plan(std::uint64_t max_message_bytes = 0);
// The quick sweeps of all_gather, reduce_scatter, alltoall, broadcast and sendrecv that `run`
// adds: every fourth size of `plan` (and its largest).
SweepPlan run_other_ops_plan(SweepPlan plan);

// The other ranks of `run` under mpirun: they wait, without spinning a core, for rank 0's word,
// take part in each MPI sweep its collective probe starts, and return the exit code rank 0 ends
// with (end_run_ranks). They write nothing. `max_message_bytes`: as rank 0's (the ranks agreed on it).
int follow_run_ranks(RankGroup& world, std::uint64_t max_message_bytes = 0);
// Rank 0, on every way out of `run` once the other ranks follow: they return `exit_code`.
void end_run_ranks(RankGroup& world, int exit_code);

// Ranks compare their options before the first collective: a rank started with other options
// would call other collectives and every rank would wait for ever. A mismatch throws InputError
// on every rank. `command` names the options in the message.
void agree_on_options(RankGroup& group, const std::string& mine, std::string_view command);

// Command-line arguments that measure `variant` of `request` in a child `interprobe`.
std::vector<std::string> child_arguments(const CollectiveRequest& request, report::AllreduceVariant variant);

}  // namespace interprobe::collective
