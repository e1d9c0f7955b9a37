// The collective probe of `interprobe run`: NCCL over this process's GPUs, and under
// `mpirun -np N interprobe run` the MPI all-reduce across the N processes. Rank 0 runs every
// probe and writes the report; the other ranks only wait for its word and take part in the MPI
// sweep, so the words below are the whole protocol between them.
#include <exception>

#include <fmt/format.h>

#include "common/cpuid.hpp"
#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/progress.hpp"
#include "probes/collective/collective_probe.hpp"
#include "probes/collective/mpi_world.hpp"
#include "probes/collective/nccl_backend.hpp"

namespace interprobe::collective {

namespace {

using report::AllreduceVariant;

// Rank 0 -> the others: measure one MPI sweep now, or return this exit code.
constexpr std::uint64_t kWordSweep = 1;
constexpr std::uint64_t kWordDone = 2;
constexpr std::uint64_t kWordOtherOpsSweep = 3;  // the quick sweeps of the other collectives
std::uint64_t done_word(int exit_code) { return (kWordDone << 32) | static_cast<std::uint32_t>(exit_code); }

CollectiveRequest mpi_request(std::uint64_t max_message_bytes) {
  CollectiveRequest request;
  request.backend = report::AllreduceBackend::mpi;
  request.plan = run_mpi_plan(max_message_bytes);
  return request;
}

const std::vector<report::CollectiveOp> kOtherOps = {report::CollectiveOp::all_gather, report::CollectiveOp::reduce_scatter,
                                                     report::CollectiveOp::alltoall, report::CollectiveOp::broadcast,
                                                     report::CollectiveOp::sendrecv};

CollectiveRequest mpi_other_ops_request(std::uint64_t max_message_bytes) {
  CollectiveRequest request = mpi_request(max_message_bytes);
  request.ops = kOtherOps;
  request.plan = run_other_ops_plan(request.plan);
  return request;
}

class RunCollectiveProbe final : public Probe {
 public:
  RunCollectiveProbe(RankGroup* world, std::string mpi_absent, std::uint64_t max_message_bytes)
      : world_(world), mpi_absent_(std::move(mpi_absent)), max_message_bytes_(max_message_bytes) {}
  std::string name() const override { return "collective"; }

  void run(const ProbeContext& ctx, report::Report& report) override {
    if (!ctx.root.is_live()) throw UnsupportedError("replaying a --root tree: all-reduce sweeps need the live machine");
    const bool mpi = world_ && world_->process_count() > 1;
    std::string no_nccl;
    const int gpus = visible_gpu_count(&no_nccl);  // compiled out: 0, and no_nccl says so
    if (gpus == 1)
      no_nccl = "one GPU: an all-reduce needs two or more ranks; `interprobe allreduce --backend nccl` measures it anyway";
    if (!mpi && gpus < 2) throw UnsupportedError(fmt::format("{}; {}", no_nccl, mpi_hint()));
    std::exception_ptr nccl_failure;
    if (gpus >= 2) {
      no_nccl.clear();
      try {
        CollectiveRequest request;
        request.plan = run_plan(max_message_bytes_);
        auto nccl = [](RankGroup& g, AllreduceVariant) { return make_nccl_backend(g); };
        make_allreduce_probe(request, single_, nccl)->run(ctx, report);
        request.ops = kOtherOps;  // then a quick sweep of each collective parallelism uses besides all-reduce
        request.plan = run_other_ops_plan(request.plan);
        make_allreduce_probe(request, single_, nccl)->run(ctx, report);
      } catch (const InterruptedError&) {
        throw;
      } catch (const UnsupportedError& e) {
        if (!mpi) throw;
        no_nccl = e.what();  // the MPI sweep still runs, and its record says why NCCL did not
      } catch (const std::exception&) {
        if (!mpi) throw;
        nccl_failure = std::current_exception();  // the probe fails, after the MPI sweep
      }
    }
    if (mpi) measure_mpi(ctx, report, no_nccl);
    if (nccl_failure) std::rethrow_exception(nccl_failure);
  }

 private:
  std::string mpi_hint() const {
    if (!mpi_absent_.empty()) return "MPI not started: " + mpi_absent_;
    return "host all-reduce across processes: `mpirun -np N interprobe run` (or `interprobe allreduce --backend mpi` "
           "under mpirun)";
  }

  void measure_mpi(const ProbeContext& ctx, report::Report& report, const std::string& no_nccl) {
    const std::size_t first = report.collective ? report.collective->allreduce.size() : 0;
    auto annotate = [&] {
      if (no_nccl.empty() || !report.collective) return;
      for (std::size_t i = first; i < report.collective->allreduce.size(); ++i)
        report.collective->allreduce[i].notes.push_back("no NCCL sweep in this run: " + no_nccl);
      for (auto& s : report.collective->sweeps)
        if (s.backend == report::AllreduceBackend::mpi) s.notes.push_back("no NCCL sweep in this run: " + no_nccl);
    };
    try {
      world_->broadcast_word(kWordSweep);
      make_allreduce_probe(mpi_request(max_message_bytes_), *world_)->run(ctx, report);
      world_->broadcast_word(kWordOtherOpsSweep);
      make_allreduce_probe(mpi_other_ops_request(max_message_bytes_), *world_)->run(ctx, report);
    } catch (...) {
      annotate();
      throw;
    }
    annotate();
  }

  RankGroup* world_;
  std::string mpi_absent_;
  std::uint64_t max_message_bytes_;
  SingleProcessGroup single_;  // NCCL over every GPU of this one process, as without mpirun
};

}  // namespace

SweepPlan run_plan(std::uint64_t max_message_bytes) {
  SweepPlan plan;
  plan.sizes_bytes = sizes_up_to(geometric_sizes(8, 128ull << 20, 2), max_message_bytes);
  plan.samples = 3;
  plan.warmup_iterations = 3;
  plan.budget_s = 0.2;
  return plan;
}

SweepPlan run_mpi_plan(std::uint64_t max_message_bytes) {
  SweepPlan plan = run_plan(max_message_bytes);
  // Up to 64 MiB, like `allreduce --backend mpi`: the ranks' host buffers (send, receive and the
  // expected result, per rank) share one machine's memory and its bandwidth, and at 128 MiB two
  // ranks on a small CI machine spend seconds per size while adding no point past the plateau.
  plan.sizes_bytes = sizes_up_to(geometric_sizes(8, 64ull << 20, 2), max_message_bytes);
  return plan;
}

SweepPlan run_other_ops_plan(SweepPlan plan) {
  // Every 16th size of the all-reduce's: latency, the knee and the plateau, at a fifth of the time.
  std::vector<std::uint64_t> sizes;
  for (std::size_t i = 0; i < plan.sizes_bytes.size(); i += 4) sizes.push_back(plan.sizes_bytes[i]);
  if (sizes.back() != plan.sizes_bytes.back()) sizes.push_back(plan.sizes_bytes.back());
  plan.sizes_bytes = sizes;
  return plan;
}

std::unique_ptr<Probe> make_run_collective_probe(RankGroup* mpi_world, std::string mpi_absent,
                                                 std::uint64_t max_message_bytes) {
  return std::make_unique<RunCollectiveProbe>(mpi_world, std::move(mpi_absent), max_message_bytes);
}

int follow_run_ranks(RankGroup& world, std::uint64_t max_message_bytes) {
  HostRoot live;
  const RecordedCpuid cpuid = RecordedCpuid::unknown("not read: this rank only takes part in all-reduces");
  ProbeContext ctx{live, cpuid, Progress::disabled()};
  for (;;) {
    const std::uint64_t word = world.broadcast_word(0);
    if (word >> 32 == kWordDone) return static_cast<int>(word & 0xffffffffu);
    if (word != kWordSweep && word != kWordOtherOpsSweep)
      world.abort_all(fmt::format("rank 0 sent {}, which this interprobe does not know (ranks of two builds?)", word), 3);
    report::Report scratch;  // rank 0 writes the report
    try {
      make_allreduce_probe(word == kWordSweep ? mpi_request(max_message_bytes) : mpi_other_ops_request(max_message_bytes), world)
          ->run(ctx, scratch);
    } catch (const InputError&) {
      // The option check threw on every rank alike: rank 0 records it and sends its exit code.
    } catch (const std::exception& e) {
      // Rank 0 may still be inside the sweep: end the job rather than leave it waiting.
      world.abort_all(fmt::format("all-reduce sweep failed: {}", e.what()), 3);
    }
  }
}

void end_run_ranks(RankGroup& world, int exit_code) { world.broadcast_word(done_word(exit_code)); }

}  // namespace interprobe::collective
