// `interprobe analyze REPORT.json`: ranks communication against compute offline, from a report
// saved elsewhere (e.g. on a GPU machine), for the workloads given; -o writes the updated report.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/session.hpp"
#include "cli/workload_options.hpp"
#include "report/analysis/findings.hpp"
#include "report/model/json.hpp"

namespace interprobe::cli {

Command add_analyze_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("analyze", "Rank communication against compute for workloads, from a saved report");
  auto file = std::make_shared<std::string>();
  auto workloads = std::make_shared<WorkloadOptions>();
  c.app->add_option("REPORT", *file, "Report written by `interprobe run -o FILE` (or bw/allreduce/compute)")->required();
  add_workload_options(c.app, *workloads);
  c.execute = [&options, file, workloads]() {
    auto prepared = prepare_workloads(*workloads);  // bad options and configs before the report is read
    report::Report r = report::read_report_file(*file);
    r.bottlenecks = rank_workloads(r, std::move(prepared));
    r.findings = analysis::derive_findings(r);
    emit_report(r, options);
    return fail_on_exit_code(r, options);
  };
  return c;
}

}  // namespace interprobe::cli
