#include <algorithm>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/session.hpp"
#include "cli/workload_compute.hpp"
#include "cli/workload_options.hpp"
#include "model/sections.hpp"
#include "probes/bandwidth/bandwidth_probe.hpp"
#include "probes/collective/collective_probe.hpp"
#include "probes/collective/mpi_world.hpp"
#include "probes/compute/compute_probe.hpp"
#include "common/errors.hpp"
#include "common/size_plan.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "probes/host/system_probe.hpp"
#include "probes/telemetry/telemetry_probe.hpp"
#include "probes/topology/topology_probe.hpp"
#include "probes/virt/virt_probe.hpp"

namespace interprobe::cli {

// What the machine is: cheap, read-only probes. `snapshot` runs these to record what they read.
std::vector<std::unique_ptr<Probe>> inventory_probes() {
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(make_system_probe());
  probes.push_back(make_topology_probe());
  probes.push_back(make_virt_probe());
  return probes;
}

// What the machine does: timed measurements.
std::vector<std::unique_ptr<Probe>> measurement_probes(collective::RankGroup* mpi_world, const std::string& mpi_absent,
                                                       std::shared_ptr<const PreparedWorkloads> workloads,
                                                       std::uint64_t max_message_bytes) {
  std::vector<std::unique_ptr<Probe>> probes;
  // Two seconds of NVML counters before anything is measured: a GPU that is not idle here is
  // shared with another workload, and every number after it is suspect. Without NVML the probe
  // is recorded `unsupported` with the reason.
  TelemetryOptions baseline;
  baseline.duration_s = 2;
  baseline.window_s = 2;
  probes.push_back(make_telemetry_probe(baseline));
  BandwidthRequest copies = bandwidth_plan(report::BandwidthPlan::quick);
  copies.sweep.sizes = sizes_up_to(copies.sweep.sizes, max_message_bytes);
  probes.push_back(make_bandwidth_probe(copies));
  probes.push_back(collective::make_run_collective_probe(mpi_world, mpi_absent, max_message_bytes));
  if (workloads) probes.push_back(make_workload_compute_probe(std::move(workloads)));
  else probes.push_back(make_compute_probe(compute_plan(report::ComputePlan::quick)));
  return probes;
}

namespace {

// Stands in for a probe the user left out, so the report still lists it and says why.
class NotSelectedProbe final : public Probe {
 public:
  NotSelectedProbe(std::string name, std::string why) : name_(std::move(name)), why_(std::move(why)) {}
  std::string name() const override { return name_; }
  void run(const ProbeContext&, report::Report&) override { throw SkippedError(why_); }

 private:
  std::string name_, why_;
};

}  // namespace

std::vector<std::unique_ptr<Probe>> select_probes(std::vector<std::unique_ptr<Probe>> all, const ProbeSelection& selection) {
  std::set<std::string> known;
  for (const auto& p : all) known.insert(p->name());
  auto check = [&](const std::vector<std::string>& names, const char* option) {
    for (const auto& n : names)
      if (!known.count(n))
        throw InputError(fmt::format("run {} {}: no such probe; probes are {}", option, n, fmt::join(known, ", ")));
  };
  check(selection.only, "--only");
  check(selection.skip, "--skip");
  auto listed = [](const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  for (auto& p : all) {
    std::string n = p->name();
    if (!selection.only.empty() && !listed(selection.only, n))
      p = std::make_unique<NotSelectedProbe>(n, "not selected (--only " + fmt::format("{}", fmt::join(selection.only, ",")) + ")");
    else if (listed(selection.skip, n))
      p = std::make_unique<NotSelectedProbe>(n, "not selected (--skip " + n + ")");
  }
  return all;
}

std::uint64_t ProbeSelection::max_message_bytes() const {
  if (!max_size) return 0;
  const std::uint64_t bytes = parse_size_bytes(*max_size, "--max-size");
  // Below 1 MiB a copy sweep has no plateau and every bandwidth figure would be latency.
  if (bytes < (1u << 20)) throw InputError(fmt::format("--max-size {}: give at least 1M", *max_size));
  return bytes;
}

void add_probe_selection_options(CLI::App* app, ProbeSelection& selection) {
  app->add_option("--only", selection.only, fmt::format("Run only these probes ({})", fmt::join(report::probe_names(), ", ")))
      ->delimiter(',')
      ->type_name("NAME,...");
  app->add_option("--skip", selection.skip, "Leave these probes out; the report lists them as skipped")
      ->delimiter(',')
      ->type_name("NAME,...");
  app->add_option("--max-size", selection.max_size,
                  "Largest message of the copy and collective sweeps (K/M/G suffixes, at least 1M; default 256M copies, "
                  "128M NCCL, 64M MPI)")
      ->type_name("SIZE");
}

std::vector<std::unique_ptr<Probe>> run_probes_of(collective::RankGroup* world, const std::string& absent,
                                                  std::shared_ptr<const PreparedWorkloads> workloads,
                                                  std::uint64_t max_message_bytes) {
  auto probes = inventory_probes();
  for (auto& p : measurement_probes(world, absent, std::move(workloads), max_message_bytes)) probes.push_back(std::move(p));
  return probes;
}

namespace {

// MPI for `run`: started only when a launcher started this process among others, so a plain
// `interprobe run` neither loads Open MPI nor differs from before.
struct RunWorld {
  collective::RankGroup* world = nullptr;  // null: one process, as without a launcher
  std::string absent;                      // why a launcher's ranks could not start MPI
};

RunWorld start_run_world() {
  if (!collective::launched_by_mpi_launcher() || collective::launcher_world_size() == 1) return {};
  try {
    return {&collective::start_mpi(), {}};
  } catch (const InterruptedError&) {
    throw;
  } catch (const std::exception& e) {
    return {nullptr, fmt::format("started by an MPI launcher, but MPI cannot start here: {}", e.what())};
  }
}

// Everything that decides what the ranks do, compared before the first collective.
std::string run_digest(const GlobalOptions& o, const ProbeSelection& selection) {
  return fmt::format("run only={} skip={} max-size={} root={} output={} json={} format={} quiet={} verbose={} libs={},{},{},{}",
                     fmt::join(selection.only, ","), fmt::join(selection.skip, ","), selection.max_size.value_or("-"),
                     o.root.value_or("-"),
                     o.output.value_or("-"), o.json, o.format, o.quiet, o.verbose, o.nvml_lib.value_or("-"),
                     o.nccl_lib.value_or("-"), o.cublaslt_lib.value_or("-"), o.cuda_lib.value_or("-"));
}

int exit_code_of(const std::exception& e) {
  if (dynamic_cast<const InputError*>(&e)) return kExitUsage;
  if (dynamic_cast<const InterruptedError*>(&e)) return kExitInterrupted;
  return kExitInternal;
}

// Rank 0's way out: the others return `code` too; when they cannot be told, MPI_Abort ends them.
void release_other_ranks(collective::RankGroup& world, int code) {
  try {
    collective::end_run_ranks(world, code);
  } catch (const std::exception&) {
    collective::finish_mpi(false, code);
  }
  collective::finish_mpi(true, code);
}

// The bottleneck ranking after the probes: a replayed tree measures nothing, so there is nothing
// to rank; a live machine always gets the section, which says what is missing.

}  // namespace

std::function<void(report::Report&)> ranking(std::shared_ptr<PreparedWorkloads> prepared) {
  return [prepared](report::Report& r) {
    if (r.host.live || r.compute || r.collective) r.bottlenecks = rank_workloads(r, *prepared);
  };
}

namespace {

int execute_run(const GlobalOptions& options, const ProbeSelection& selection, const WorkloadOptions& workloads) {
  auto prepared = std::make_shared<PreparedWorkloads>(prepare_workloads(workloads));  // bad models: exit 2 first
  const std::uint64_t max_message_bytes = selection.max_message_bytes();  // malformed: exit 2 before MPI starts
  const auto all_probes = [prepared, max_message_bytes](collective::RankGroup* world, const std::string& absent) {
    return run_probes_of(world, absent, prepared, max_message_bytes);
  };
  select_probes(all_probes(nullptr, {}), selection);  // bad --only/--skip: exit 2 on every rank, before MPI starts
  auto rank_after = ranking(prepared);
  RunWorld mpi = start_run_world();
  if (!mpi.world && !mpi.absent.empty()) {
    // Without MPI the ranks cannot agree on anything: rank 0 reports alone and says why.
    if (auto rank = collective::launcher_world_rank(); rank && *rank != 0) {
      std::cerr << fmt::format("interprobe: rank {}: {}; rank 0 writes the report\n", *rank, printable(mpi.absent));
      return kExitOk;
    }
  }
  const auto probes = select_probes(all_probes(mpi.world, mpi.absent), selection);
  GlobalOptions o = options;
  if (collective::launched_by_mpi_launcher()) o.no_color = true;  // mpirun hands its ranks a pseudo-terminal
  if (!mpi.world) return run_session(o, probes, UnsupportedPolicy::record, rank_after).exit_code;
  collective::RankGroup& world = *mpi.world;
  try {
    collective::agree_on_options(world, run_digest(options, selection), "run");
  } catch (const InputError&) {
    collective::finish_mpi(true, kExitUsage);  // every rank threw: they end together
    throw;
  }
  if (world.process_rank() != 0) {
    silence_stdout();
    int code = kExitInternal;
    try {
      code = collective::follow_run_ranks(world, max_message_bytes);
    } catch (const std::exception& e) {
      std::cerr << "interprobe: error on rank " << world.process_rank() << ": " << printable(e.what()) << "\n";
      collective::finish_mpi(false, kExitInternal);
      throw;
    }
    collective::finish_mpi(true, code);
    return code;
  }
  int code = kExitInternal;
  try {
    code = run_session(o, probes, UnsupportedPolicy::record, rank_after).exit_code;
  } catch (const std::exception& e) {
    release_other_ranks(world, exit_code_of(e));
    throw;
  }
  release_other_ranks(world, code);
  return code;
}

}  // namespace

Command add_run_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("run", "Run every probe and report (the default command)");
  auto selection = std::make_shared<ProbeSelection>();
  add_probe_selection_options(c.app, *selection);
  auto workloads = std::make_shared<WorkloadOptions>();
  add_workload_options(c.app, *workloads);
  c.execute = [&options, selection, workloads]() { return execute_run(options, *selection, *workloads); };
  return c;
}

}  // namespace interprobe::cli
