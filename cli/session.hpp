#pragma once
// What every probing subcommand shares: open the root, build the report header, run the
// probes inside their error boundaries, derive findings, write/print, pick the exit code.
#include <memory>
#include <vector>

#include "cli/global_options.hpp"
#include "probes/runner/probe.hpp"
#include "report/model/report.hpp"

namespace interprobe::cli {

struct SessionResult {
  report::Report report;
  int exit_code = 0;
};

enum class UnsupportedPolicy {
  record,      // `run`: an unsupported probe is data, exit 0
  exit_code_4  // single-probe subcommands: exit 4 when it cannot run here
};

SessionResult run_session(const GlobalOptions& options, const std::vector<std::unique_ptr<Probe>>& probes,
                          UnsupportedPolicy policy);

// Fills tool name/version/features and, on a live root, the vendor libraries.
report::ToolInfo tool_info(bool probe_libraries, bool live);
// Prints the report in the chosen format (and writes -o); throws InputError on bad options.
void emit_report(const report::Report& report, const GlobalOptions& options);

}  // namespace interprobe::cli
