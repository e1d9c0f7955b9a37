// `interprobe allreduce`: all-reduce sweeps like nccl-tests' all_reduce_perf, on GPUs through
// NCCL or on hosts through MPI. Under mpirun every rank runs this; only rank 0 prints and
// writes the report, and the ranks check first that they were given the same options.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/option_checks.hpp"
#include "cli/session.hpp"
#include "probes/collective/collective_ops.hpp"
#include "probes/collective/collective_probe.hpp"
#include "probes/collective/mpi_world.hpp"
#include "probes/collective/nccl_environment.hpp"
#include "common/errors.hpp"
#include "common/text.hpp"
#include "common/units.hpp"

namespace interprobe::cli {

namespace {

using namespace interprobe::collective;

struct AllreduceOptions {
  std::string backend = "nccl";
  std::optional<std::string> min = "8", max, sizes;
  double factor = 2;
  std::string dtype = "float";
  std::string placement = "both";
  std::string variant = "default";
  int iterations = 20, samples = 5, warmup = 5;
  double budget_s = 0.5, timeout_s = 60;
  std::string ops = "all_reduce";  // `collectives --ops`
};

CollectiveRequest build_request(const AllreduceOptions& o) {
  CollectiveRequest r;
  const auto backend = report::parse_enum<report::AllreduceBackend>(o.backend);
  if (!backend)
    throw InputError(fmt::format("--backend '{}': unknown; use nccl (GPUs) or mpi (host buffers, under mpirun)", o.backend));
  r.backend = *backend;
  r.variants = parse_variant_list(o.variant);
  r.ops = parse_op_list(o.ops);
  if (r.backend == report::AllreduceBackend::mpi && r.variants != std::vector{report::AllreduceVariant::default_})
    throw InputError("--variant: p2p-off and shm-off are NCCL settings; the MPI backend has only 'default'");
  r.plan.dtypes = parse_dtype_list(o.dtype);
  parse_placement(o.placement, r.plan);
  if (o.sizes) {
    r.plan.sizes_bytes = parse_size_list(*o.sizes);
  } else {
    // 1 GiB per GPU is what nccl-tests is usually run to; host buffers of two ranks on one
    // machine share its memory bandwidth, so MPI stops at 64 MiB unless told otherwise.
    const std::string max = o.max.value_or(r.backend == report::AllreduceBackend::mpi ? "64M" : "1G");
    r.plan.sizes_bytes = geometric_sizes(parse_size_bytes(o.min.value_or("8"), "--min"), parse_size_bytes(max, "--max"), o.factor);
  }
  r.plan.iterations = o.iterations;
  r.plan.samples = o.samples;
  r.plan.warmup_iterations = o.warmup;
  r.plan.budget_s = o.budget_s;
  r.plan.timeout_s = o.timeout_s;
  validate_plan(r.plan);
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) r.self_executable = self.string();
  return r;
}

int execute_allreduce(const GlobalOptions& global, const AllreduceOptions& o) {
  CollectiveRequest request = build_request(o);  // bad input: exit 2 on every rank, before MPI starts
  const bool under_launcher = launched_by_mpi_launcher();
  if (under_launcher && !mpi_compiled_in() && launcher_world_size() > 1)
    throw UnsupportedError("started by an MPI launcher, but this interprobe was built without MPI, so its ranks cannot "
                           "agree; rebuild with -DINTERPROBE_WITH_MPI=ON or run one process without mpirun");
  SingleProcessGroup single;
  RankGroup* group = &single;
  if (request.backend == report::AllreduceBackend::mpi || (under_launcher && mpi_compiled_in())) group = &start_mpi();

  GlobalOptions options = global;
  // mpirun hands its ranks a pseudo-terminal whatever the user's stdout is: no colour codes.
  if (under_launcher) options.no_color = true;
  if (group->process_rank() != 0) {
    options.output.reset();
    options.quiet = true;
    silence_stdout();
  }
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(make_allreduce_probe(std::move(request), *group));
  int code = kExitInternal;
  try {
    code = run_session(options, probes, UnsupportedPolicy::exit_code_4).exit_code;
  } catch (const std::exception& e) {
    // Failed before or after the probe on this rank alone: end the job rather than leave the
    // other ranks waiting in a collective.
    if (group->process_count() > 1) {
      std::cerr << "interprobe: error on rank " << group->process_rank() << ": " << printable(e.what()) << "\n";
      finish_mpi(false, dynamic_cast<const InputError*>(&e) ? kExitUsage : kExitInternal);
    }
    finish_mpi(true, 0);
    throw;
  }
  finish_mpi(true, code);
  return code;
}

// The options `allreduce` and `collectives` share (nccl-tests' and this tool's own).
void add_sweep_options(CLI::App* cmd, const std::shared_ptr<AllreduceOptions>& o) {
  cmd->add_option("--backend", o->backend, "nccl: every GPU of this process, or one per rank under mpirun; mpi: "
                                           "MPI collectives on host buffers")
      ->type_name("nccl|mpi")
      ->capture_default_str();
  auto* min = cmd->add_option("--min", o->min, "Smallest size (K/M/G suffixes, binary)")->type_name("SIZE")->capture_default_str();
  auto* max = cmd->add_option("--max", o->max, "Largest size (default 1G for nccl, 64M for mpi)")->type_name("SIZE");
  auto* factor = cmd->add_option("--factor", o->factor, "Each size is the previous one times this")
                     ->check(finite_number())
                     ->capture_default_str();
  cmd->add_option("--sizes", o->sizes, "Exactly these sizes, comma-separated (instead of --min/--max/--factor)")
      ->type_name("LIST")
      ->excludes(min)
      ->excludes(max)
      ->excludes(factor);
  cmd->add_option("--dtype", o->dtype, "Element types, comma-separated: float, half, bfloat16")->type_name("LIST")->capture_default_str();
  cmd->add_option("--placement", o->placement, "both, out-of-place or in-place")->type_name("WHICH")->capture_default_str();
  cmd->add_option("--variant", o->variant,
                  "NCCL settings, comma-separated: default, p2p-off (NCCL_P2P_DISABLE=1), shm-off (NCCL_SHM_DISABLE=1); "
                  "each further variant runs in a fresh process")
      ->type_name("LIST")
      ->capture_default_str();
  cmd->add_option("--iters", o->iterations, "Collectives per timed sample")->capture_default_str();
  cmd->add_option("--samples", o->samples, "Timed samples per size and placement")->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Warm-up collectives per size, over every size before timing")->capture_default_str();
  cmd->add_option("--budget", o->budget_s, "Seconds per size and placement; slow sizes get fewer iterations (0: no limit)")
      ->type_name("S")
      ->check(finite_number())
      ->capture_default_str();
  cmd->add_option("--timeout", o->timeout_s, "Seconds a size may take before its collective counts as hung and is aborted (NCCL)")
      ->type_name("S")
      ->check(finite_number())
      ->capture_default_str();
}

}  // namespace

Command add_allreduce_command(CLI::App& app, GlobalOptions& options) {
  auto o = std::make_shared<AllreduceOptions>();
  Command c;
  c.app = app.add_subcommand("allreduce",
                             "All-reduce sweep (sum) over sizes like nccl-tests: NCCL over the GPUs, or MPI over host "
                             "buffers under mpirun; time, algbw, busbw and #wrong per size");
  add_sweep_options(c.app, o);
  c.execute = [&options, o]() { return execute_allreduce(options, *o); };
  return c;
}

Command add_collectives_command(CLI::App& app, GlobalOptions& options) {
  auto o = std::make_shared<AllreduceOptions>();
  o->ops = "all";
  Command c;
  c.app = app.add_subcommand("collectives",
                             "Sweeps of the collectives parallelism uses, like nccl-tests' *_perf: all_reduce, all_gather, "
                             "reduce_scatter, alltoall, broadcast, sendrecv; NCCL over the GPUs or MPI under mpirun");
  c.app->add_option("--ops", o->ops, "Collectives, comma-separated: all_reduce, all_gather, reduce_scatter, alltoall, "
                                     "broadcast, sendrecv, or all")
      ->type_name("LIST")
      ->capture_default_str();
  add_sweep_options(c.app, o);
  c.execute = [&options, o]() { return execute_allreduce(options, *o); };
  return c;
}

}  // namespace interprobe::cli
