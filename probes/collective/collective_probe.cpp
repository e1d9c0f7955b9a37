#include "probes/collective/collective_probe.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "probes/collective/allreduce_sweep.hpp"
#include "probes/collective/child_process.hpp"
#include "probes/collective/collective_ops.hpp"
#include "probes/collective/mpi_world.hpp"
#include "probes/collective/nccl_backend.hpp"
#include "probes/collective/nccl_environment.hpp"
#include "probes/collective/nccl_log.hpp"
#include "common/dynlib.hpp"
#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/interrupt.hpp"
#include "common/progress.hpp"
#include "model/json.hpp"

namespace interprobe::collective {

namespace {

using report::AllreduceBackend;
using report::AllreduceStatus;
using report::AllreduceVariant;
using report::CollectiveOp;

// What the MPI backend calls for `op` (mpi_module.cpp).
const char* mpi_call_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce: return "MPI_Allreduce";
    case CollectiveOp::all_gather: return "MPI_Allgather";
    case CollectiveOp::reduce_scatter: return "MPI_Reduce_scatter_block";
    case CollectiveOp::alltoall: return "MPI_Alltoall";
    case CollectiveOp::broadcast: return "MPI_Bcast (the root's send buffer first copied into its receive buffer)";
    case CollectiveOp::sendrecv: return "MPI_Sendrecv";
  }
  return "MPI";
}

// The variant whose environment this process's NCCL has read (it reads it only once).
std::optional<AllreduceVariant>& nccl_variant_of_this_process() {
  static std::optional<AllreduceVariant> variant;
  return variant;
}

class AllreduceProbe final : public Probe {
 public:
  AllreduceProbe(CollectiveRequest request, RankGroup& group, BackendFactory factory)
      : request_(std::move(request)), group_(group), factory_(std::move(factory)) {}

  std::string name() const override { return "collective"; }

  void run(const ProbeContext& ctx, report::Report& report) override {
    if (!ctx.root.is_live()) throw UnsupportedError("replaying a --root tree: all-reduce sweeps need the live machine");
    validate_plan(request_.plan);
    const bool nccl = request_.backend == AllreduceBackend::nccl;
    if (!nccl && request_.variants != std::vector<AllreduceVariant>{AllreduceVariant::default_})
      throw InputError("--variant: p2p-off and shm-off are NCCL settings; the MPI backend has only 'default'");
    if (nccl && group_.process_count() > 1 && request_.variants.size() > 1)
      throw InputError("--variant: under mpirun give one variant per launch (NCCL reads NCCL_P2P_DISABLE and "
                       "NCCL_SHM_DISABLE once per process); run mpirun once per variant");
    agree_on_options(group_, digest_text(request_.plan, request_.backend, request_.variants) + " ops=" + op_list_text(request_.ops),
                     command_name());
    if (!report.collective) report.collective.emplace();
    for (AllreduceVariant variant : request_.variants) {
      throw_if_interrupted();  // a variant in a child would otherwise start after Ctrl-C and run to its end
      const auto& applied = nccl_variant_of_this_process();
      if (nccl && applied && *applied != variant) run_in_child(variant, *report.collective);
      else run_here(ctx, variant, *report.collective);
    }
    if (!first_failure_.empty()) throw std::runtime_error(first_failure_);
  }

 private:
  void run_here(const ProbeContext& ctx, AllreduceVariant variant, report::CollectiveSection& section) {
    const bool nccl = request_.backend == AllreduceBackend::nccl;
    ScopedEnvironment env(nccl ? variant_environment(variant) : std::map<std::string, std::string>{});
    NcclLogCapture* log = nccl ? &NcclLogCapture::for_this_process() : nullptr;  // before NCCL starts
    if (nccl) nccl_variant_of_this_process() = variant;
    NcclLogSummary log_summary;
    std::unique_ptr<CollectiveBackend> backend;
    for (const auto& entry : sweeps_to_run()) {
      const CollectiveOp op = entry.first;
      const Dtype dtype = entry.second;
      if (!backend) backend = factory_(group_, variant);  // UnsupportedError leaves the probe unsupported
      auto& sweeps = op == CollectiveOp::all_reduce ? section.allreduce : section.sweeps;
      sweeps.push_back(sweep_header(*backend, variant, op, dtype, nccl));
      auto& sweep = sweeps.back();
      SweepObserver observer;
      if (group_.process_rank() == 0) {
        observer.progress = [&](const std::string& line) { ctx.progress.update(fmt::format("{} {} {}", display_name(op), cli_name(variant), line)); };
        // NCCL sizes carry what this machine's GPUs did (rank 0 samples them); MPI reduces host memory.
        if (nccl && ctx.windows) ctx.windows->start(), observer.windows = ctx.windows;
      }
      try {
        run_collective_sweep(*backend, request_.plan, op, dtype, sweep, observer);
      } catch (const CollectiveHang& hang) {
        sweep.status = AllreduceStatus::hung;
        sweep.reason = hang.what();
        sweep.hung_at_bytes = static_cast<std::int64_t>(hang.bytes());
        backend.reset();  // aborted: the next type starts a new communicator
      } catch (const InterruptedError&) {
        sweep.status = AllreduceStatus::interrupted;
        sweep.reason = "interrupted";
        attach_log(log, log_summary, sweep);
        throw;
      } catch (const InputError&) {
        throw;
      } catch (const std::exception& e) {
        // Only this process saw it: the others would wait in the next collective for ever.
        if (group_.process_count() > 1) group_.abort_all(fmt::format("{} sweep failed: {}", display_name(op), e.what()), 3);
        sweep.status = AllreduceStatus::failed;
        sweep.reason = e.what();
        if (first_failure_.empty()) first_failure_ = e.what();
        backend.reset();
      }
      attach_log(log, log_summary, sweep);
      sweep.summary = summarize_sweep(sweep.points);
    }
  }

  // Each collective in every element type, in the order asked.
  std::vector<std::pair<CollectiveOp, Dtype>> sweeps_to_run() const {
    std::vector<std::pair<CollectiveOp, Dtype>> out;
    for (CollectiveOp op : request_.ops)
      for (Dtype dtype : request_.plan.dtypes) out.emplace_back(op, dtype);
    return out;
  }

  // `allreduce` or `collectives`: what a mismatch of options names, and a child runs.
  std::string command_name() const { return request_.ops == std::vector{CollectiveOp::all_reduce} ? "allreduce" : "collectives"; }

  report::AllreduceSweep sweep_header(const CollectiveBackend& backend, AllreduceVariant variant, CollectiveOp op, Dtype dtype,
                                      bool nccl) const {
    report::AllreduceSweep s;
    s.collective = op;
    s.op = reduction_name(op);
    s.backend = backend.kind();
    s.ranks = backend.ranks();
    s.nodes = group_.nodes();
    s.dtype = dtype;
    s.variant = variant;
    s.library_version = backend.library_version();
    s.devices = backend.devices();
    s.warmup_iterations = request_.plan.warmup_iterations;
    s.timeout_s = nccl ? request_.plan.timeout_s : 0;
    if (nccl) s.environment = nccl_environment_in_force();
    for (const auto& note : backend.notes()) s.notes.push_back(note);
    if (s.ranks == 1)
      s.notes.push_back(nccl ? "1 rank: NCCL copies the buffer on one GPU; busbw is 0 by definition (2(n-1)/n) and algbw is "
                               "that GPU's copy speed, not an interconnect"
                             : "1 rank: nothing crosses a link and busbw is 0 by definition; start it with "
                               "`mpirun -np 2` or more");
    // An MPI collective cannot be aborted and resumed, so no watchdog bounds it (in `allreduce` or `run`).
    if (!nccl) s.notes.push_back(fmt::format("{} on host buffers; no watchdog can abort it: bound the job with mpirun --timeout",
                                             mpi_call_name(op)));
    if (!has_in_place(op)) s.notes.push_back("out of place only: in place it would overwrite what it still has to send");
    if (op == CollectiveOp::broadcast) s.notes.push_back("root rank 0");
    return s;
  }

  void attach_log(NcclLogCapture* log, NcclLogSummary& so_far, report::AllreduceSweep& sweep) const {
    if (!log) return;
    for (const auto& note : log->notes())
      if (std::find(sweep.notes.begin(), sweep.notes.end(), note) == sweep.notes.end()) sweep.notes.push_back(note);
    NcclLogSummary this_sweep;
    const std::string text = log->read_new();
    parse_nccl_log(text, so_far);     // connections are made once per communicator: keep them
    parse_nccl_log(text, this_sweep); // algorithms: what this type's calls used
    sweep.transports = transports_of(so_far);
    sweep.algorithms = algorithms_of(this_sweep);
    for (const auto& w : this_sweep.warnings) sweep.notes.push_back(w);
    if (group_.process_count() > 1) sweep.notes.push_back("transports as rank 0's NCCL log shows its own connections");
  }

  void run_in_child(AllreduceVariant variant, report::CollectiveSection& section) {
    auto failed = [&](const std::string& why) {
      for (const auto& [op, dtype] : sweeps_to_run()) {
        report::AllreduceSweep s;
        s.collective = op;
        s.op = reduction_name(op);
        s.backend = AllreduceBackend::nccl;
        s.dtype = dtype;
        s.variant = variant;
        s.status = AllreduceStatus::failed;
        s.reason = why;
        (op == CollectiveOp::all_reduce ? section.allreduce : section.sweeps).push_back(s);
      }
    };
    if (request_.self_executable.empty()) {
      failed("another NCCL variant needs a fresh process and the path of interprobe is unknown; run it with --variant " + std::string(cli_name(variant)));
      return;
    }
    auto env = variant_environment(variant);
    if (auto lib = library_override(VendorLibrary::nccl)) env["INTERPROBE_NCCL_LIB"] = *lib;
    const double limit_s = request_.plan.timeout_s * static_cast<double>(request_.plan.sizes_bytes.size() + 2) *
                           static_cast<double>(request_.plan.dtypes.size());
    ChildResult child = run_child(request_.self_executable, child_arguments(request_, variant), env, limit_s);
    if (!child.error.empty()) return failed(child.error);
    if (child.timed_out) return failed(fmt::format("the child process for variant {} did not finish in {:.0f} s; killed", cli_name(variant), limit_s));
    try {
      report::Report theirs = report::parse_report_text(child.out, "report of the child for variant " + std::string(cli_name(variant)));
      const report::ProbeRecord* probe = theirs.probe("collective");
      if (theirs.collective) {
        for (auto& s : theirs.collective->allreduce)
          if (s.variant == variant) section.allreduce.push_back(std::move(s));
        for (auto& s : theirs.collective->sweeps)
          if (s.variant == variant) section.sweeps.push_back(std::move(s));
      }
      if (probe && probe->status != report::ProbeStatus::ok &&
          (!theirs.collective || (theirs.collective->allreduce.empty() && theirs.collective->sweeps.empty())))
        failed(fmt::format("variant {} in a child process: {} ({})", cli_name(variant), report::to_string(probe->status),
                           probe->reason.value_or("no reason given")));
    } catch (const InputError& e) {
      failed(fmt::format("the child process for variant {} exited {} without a readable report: {}", cli_name(variant), child.exit_code, e.what()));
    }
  }

  CollectiveRequest request_;
  RankGroup& group_;
  BackendFactory factory_;
  std::string first_failure_;
};

std::unique_ptr<CollectiveBackend> real_backend(AllreduceBackend backend, RankGroup& group) {
  if (backend == AllreduceBackend::mpi) return make_mpi_backend(group);
  return make_nccl_backend(group);
}

}  // namespace

std::unique_ptr<Probe> make_allreduce_probe(CollectiveRequest request, RankGroup& group, BackendFactory factory) {
  return std::make_unique<AllreduceProbe>(std::move(request), group, std::move(factory));
}

std::unique_ptr<Probe> make_allreduce_probe(CollectiveRequest request, RankGroup& group) {
  const AllreduceBackend backend = request.backend;
  return make_allreduce_probe(std::move(request), group,
                              [backend](RankGroup& g, AllreduceVariant) { return real_backend(backend, g); });
}

void agree_on_options(RankGroup& group, const std::string& mine, std::string_view command) {
  if (group.process_count() == 1) return;
  std::vector<std::byte> blob(mine.size());
  std::transform(mine.begin(), mine.end(), blob.begin(), [](char c) { return static_cast<std::byte>(c); });
  const auto theirs = group.broadcast(blob);
  const bool same = theirs == blob;
  const std::uint64_t differing = group.sum_over_processes(same ? 0 : 1);
  if (differing == 0) return;
  std::string rank0(theirs.size(), ' ');
  std::transform(theirs.begin(), theirs.end(), rank0.begin(), [](std::byte b) { return static_cast<char>(b); });
  if (same)
    throw InputError(fmt::format("{} of {} MPI ranks were started with options other than rank 0's ({}); give every rank "
                                 "the same {} options",
                                 differing, group.process_count(), rank0, command));
  throw InputError(fmt::format("MPI rank {} was started with options other than rank 0's: rank 0 has '{}', rank {} has "
                               "'{}'; give every rank the same {} options",
                               group.process_rank(), rank0, group.process_rank(), mine, command));
}

std::vector<std::string> child_arguments(const CollectiveRequest& request, AllreduceVariant variant) {
  const auto& plan = request.plan;
  std::string dtypes;
  for (auto d : plan.dtypes) dtypes += fmt::format("{}{}", dtypes.empty() ? "" : ",", to_string(d));
  const char* placement = plan.out_of_place && plan.in_place ? "both" : (plan.in_place ? "in-place" : "out-of-place");
  std::vector<std::string> args = {"allreduce"};
  if (request.ops != std::vector{CollectiveOp::all_reduce}) args = {"collectives", "--ops", op_list_text(request.ops)};
  std::vector<std::string> options = {"--backend", to_string(request.backend), "--variant", cli_name(variant), "--sizes", sizes_text(plan.sizes_bytes),
          "--dtype", dtypes, "--placement", placement, "--iters", std::to_string(plan.iterations),
          "--samples", std::to_string(plan.samples), "--warmup", std::to_string(plan.warmup_iterations),
          "--budget", fmt::format("{}", plan.budget_s), "--timeout", fmt::format("{}", plan.timeout_s), "--json", "--quiet"};
  args.insert(args.end(), options.begin(), options.end());
  return args;
}

}  // namespace interprobe::collective
