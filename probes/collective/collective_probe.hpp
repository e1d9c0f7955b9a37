#pragma once
// The `collective` probe: all-reduce sweeps into report.collective.allreduce, one entry per
// variant and element type, written as it goes.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "probes/collective/collective_backend.hpp"
#include "probes/collective/sweep_plan.hpp"
#include "probes/runner/probe.hpp"

namespace interprobe::collective {

struct CollectiveRequest {
  report::AllreduceBackend backend = report::AllreduceBackend::nccl;
  std::vector<report::AllreduceVariant> variants = {report::AllreduceVariant::default_};
  SweepPlan plan;
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
// run_plan(); otherwise `unsupported` with the reason. It never starts MPI (see README).
std::unique_ptr<Probe> make_run_collective_probe();
SweepPlan run_plan();

// Command-line arguments that measure `variant` of `request` in a child `interprobe`.
std::vector<std::string> child_arguments(const CollectiveRequest& request, report::AllreduceVariant variant);

}  // namespace interprobe::collective
