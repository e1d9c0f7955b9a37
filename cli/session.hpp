#pragma once
#include <functional>
// What every probing subcommand shares: open the root, build the report header, run the
// probes inside their error boundaries, derive findings, write/print, pick the exit code.
#include <memory>
#include <vector>

#include "cli/global_options.hpp"
#include "common/host_root.hpp"
#include "probes/runner/probe.hpp"
#include "model/report.hpp"
#include "report/render/renderers.hpp"

namespace interprobe::cli {

struct SessionResult {
  report::Report report;
  int exit_code = 0;
};

enum class UnsupportedPolicy {
  record,      // `run`: an unsupported probe is data, exit 0
  exit_code_4  // single-probe subcommands: exit 4 when it cannot run here
};

// The report header lists the vendor libraries the probes opened (every one with --verbose);
// nothing is loaded for the header itself.
// after_probes derives what is not a probe (the bottleneck ranking) before findings and output.
SessionResult run_session(const GlobalOptions& options, const std::vector<std::unique_ptr<Probe>>& probes,
                          UnsupportedPolicy policy, const std::function<void(report::Report&)>& after_probes = {});

// The machine to read: live, a --root tree, or a --root snapshot archive extracted (after
// validation) into a temporary directory that lives as long as this object.
struct OpenedRoot {
  std::shared_ptr<void> extracted;  // keeps the temporary directory alive
  HostRoot root;
  std::string label;  // what the user gave (the archive path, not the temporary directory)
};
OpenedRoot open_root(const GlobalOptions& options);
std::string utc_now_iso8601();

// Fills tool name/version/features and, on a live root, the vendor libraries this process has
// opened so far, or (`list_all_libraries`) every one, located on disk without loading it.
report::ToolInfo tool_info(bool list_all_libraries, bool live);
// Points stdout at /dev/null: the ranks of an MPI job other than 0 print nothing (mpirun merges
// every rank's stdout into one, where a second report would corrupt the first).
void silence_stdout();
// Prints the report in the chosen format (and writes -o); throws InputError on bad options.
void emit_report(const report::Report& report, const GlobalOptions& options);

// Fails (InputError) before any work when --format cannot be honoured: prometheus for a command
// that prints no report (check, compare, snapshot), or in a build without prometheus-cpp.
void check_output_format(const std::string& command, const GlobalOptions& options);

// How text goes to stdout: colour (a terminal, no --no-color, no NO_COLOR) and the width to fit
// (COLUMNS, else the terminal's, else no limit off a terminal).
render::TextStyle text_style(const GlobalOptions& options);

// --fail-on: the report's findings at or above its severity, as "id (severity)"; none for never.
std::vector<std::string> fail_on_hits(const report::Report& report, const GlobalOptions& options);
// --fail-on: kExitCheckFailed (saying which findings, on stderr) when a finding reaches the
// severity, else kExitOk.
int fail_on_exit_code(const report::Report& report, const GlobalOptions& options);

}  // namespace interprobe::cli
