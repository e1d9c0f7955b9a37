#pragma once
// One file per subcommand; each registers itself on the app and returns how to execute it.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "probes/runner/probe.hpp"

#include "cli/global_options.hpp"

namespace interprobe::collective {
class RankGroup;
}

namespace CLI {
class App;
}

namespace interprobe::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> execute;
};

// The probes of `interprobe run`, in order (cmd_run.cpp): inventory first, then measurements.
std::vector<std::unique_ptr<Probe>> inventory_probes();
// `mpi_world`: the ranks of `mpirun -np N interprobe run` (collective measures MPI across them);
// `mpi_absent`: why a launcher's ranks could not start MPI.
struct PreparedWorkloads;
// `workloads`: the compute probe measures the GEMM shapes their ranking will price
// (workload_compute.hpp); null: the quick compute plan.
// `max_message_bytes` (--max-size; 0: the quick plans' own) cuts the copy and collective sweeps.
std::vector<std::unique_ptr<Probe>> measurement_probes(collective::RankGroup* mpi_world = nullptr,
                                                       const std::string& mpi_absent = {},
                                                       std::shared_ptr<const PreparedWorkloads> workloads = nullptr,
                                                       std::uint64_t max_message_bytes = 0);

// What `run` (and `fleet` on each node) probes: --only/--skip over the probes above. A name not
// among them is an InputError naming the option; a probe left out stays in the list as `skipped`.
// --max-size: the largest message of the copy and collective sweeps (a slow link, a short CI job).
struct ProbeSelection {
  std::vector<std::string> only, skip;
  std::optional<std::string> max_size;
  std::uint64_t max_message_bytes() const;  // 0 without --max-size; InputError naming it when malformed
};
void add_probe_selection_options(CLI::App* app, ProbeSelection& selection);
std::vector<std::unique_ptr<Probe>> select_probes(std::vector<std::unique_ptr<Probe>> all, const ProbeSelection& selection);
// Every probe of `run`, inventory then measurements.
std::vector<std::unique_ptr<Probe>> run_probes_of(collective::RankGroup* mpi_world, const std::string& mpi_absent,
                                                  std::shared_ptr<const PreparedWorkloads> workloads = nullptr,
                                                  std::uint64_t max_message_bytes = 0);
// The bottleneck ranking `run` derives after its probes, for the prepared workloads.
std::function<void(report::Report&)> ranking(std::shared_ptr<PreparedWorkloads> prepared);

Command add_run_command(CLI::App& app, GlobalOptions& options);
Command add_fleet_command(CLI::App& app, GlobalOptions& options);
Command add_snapshot_command(CLI::App& app, GlobalOptions& options);
Command add_report_command(CLI::App& app, GlobalOptions& options);
Command add_virt_command(CLI::App& app, GlobalOptions& options);
Command add_topo_command(CLI::App& app, GlobalOptions& options);
Command add_allreduce_command(CLI::App& app, GlobalOptions& options);
Command add_collectives_command(CLI::App& app, GlobalOptions& options);
Command add_bw_command(CLI::App& app, GlobalOptions& options);
Command add_compute_command(CLI::App& app, GlobalOptions& options);
Command add_analyze_command(CLI::App& app, GlobalOptions& options);
Command add_check_command(CLI::App& app, GlobalOptions& options);
Command add_compare_command(CLI::App& app, GlobalOptions& options);
Command add_observe_command(CLI::App& app, GlobalOptions& options);

int print_version(const GlobalOptions& options);

}  // namespace interprobe::cli
