#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/session.hpp"
#include "probes/host/system_probe.hpp"

namespace interprobe::cli {

namespace {

std::vector<std::unique_ptr<Probe>> run_probes_list() {
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(make_system_probe());
  return probes;
}

}  // namespace

Command add_run_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("run", "Run every probe and report (the default command)");
  c.execute = [&options]() { return run_session(options, run_probes_list(), UnsupportedPolicy::record).exit_code; };
  return c;
}

}  // namespace interprobe::cli
