// interprobe: what limits the interconnect of this GPU server or VM.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/session.hpp"
#include "cli/suggest.hpp"
#include "common/errors.hpp"
#include "common/interrupt.hpp"
#include "common/text.hpp"

namespace {

using namespace interprobe;
using namespace interprobe::cli;

// Every command's output ends here, so no command exits 0 when what it printed did not arrive:
// a full disk behind `--format prometheus > FILE` left an empty file and exit 0. The exit code
// stays the command's own when it already failed; 0 and 1 (a check's verdict) become 2.
int with_stdout_written(int exit_code) {
  errno = 0;
  std::cout.flush();
  bool failed = !std::cout.good();
  failed = std::fflush(stdout) != 0 || failed;
  failed = std::ferror(stdout) != 0 || failed;
  if (!failed) return exit_code;
  int why = errno;
  std::cerr << "interprobe: error: could not write the output to stdout" << (why != 0 ? std::string(" (") + std::strerror(why) + ")" : "")
            << "; what it printed is incomplete: make room where stdout goes (or send it elsewhere) and run again\n";
  return exit_code == kExitOk || exit_code == kExitCheckFailed ? kExitUsage : exit_code;
}

// The command the line names; its exceptions become the documented exit codes.
int run_command(const std::vector<Command>& commands, const GlobalOptions& options, bool version) {
  try {
    apply_library_overrides(options);
    if (version) return print_version(options);
    for (const auto& c : commands) {
      if (!c.app->parsed()) continue;
      check_output_format(c.app->get_name(), options);
      return c.execute();
    }
    check_output_format("run", options);
    return commands.front().execute();  // plain `interprobe` is `interprobe run`
  } catch (const InputError& e) {
    std::cerr << "interprobe: error: " << printable(e.what()) << "\n";
    return kExitUsage;
  } catch (const InterruptedError&) {
    // A command that had nothing measured yet (e.g. `report` waiting on a silent pipe).
    std::cerr << "interprobe: interrupted\n";
    return kExitInterrupted;
  } catch (const UnsupportedError& e) {
    std::cerr << "interprobe: cannot run here: " << printable(e.what()) << "\n";
    return kExitUnsupported;
  } catch (const std::exception& e) {
    std::cerr << "interprobe: internal error: " << printable(e.what()) << "\n";
    return kExitInternal;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace interprobe;
  using namespace interprobe::cli;
  // First thing: a Ctrl-C during start-up (loading vendor libraries can take a while) must
  // still end in a written report and exit 130, not in a killed process.
  install_interrupt_handler();

  CLI::App app{"interprobe: probes the interconnect of GPU servers and GPU VMs and tells what limits them",
               "interprobe"};
  app.fallthrough();  // global options may follow the subcommand
  app.require_subcommand(0, 1);
  GlobalOptions options;
  add_global_options(app, options);
  bool version = false;
  app.add_flag("--version", version, "Print version, compiled-in features and vendor libraries found");

  std::vector<Command> commands;
  commands.push_back(add_run_command(app, options));
  commands.push_back(add_fleet_command(app, options));
  commands.push_back(add_report_command(app, options));
  commands.push_back(add_virt_command(app, options));
  commands.push_back(add_topo_command(app, options));
  commands.push_back(add_allreduce_command(app, options));
  commands.push_back(add_collectives_command(app, options));
  commands.push_back(add_bw_command(app, options));
  commands.push_back(add_compute_command(app, options));
  commands.push_back(add_analyze_command(app, options));
  commands.push_back(add_check_command(app, options));
  commands.push_back(add_compare_command(app, options));
  commands.push_back(add_observe_command(app, options));
#if INTERPROBE_HAVE_LIBARCHIVE
  commands.push_back(add_snapshot_command(app, options));
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    if (code != 0) {
      // Words the parser could not place: the nearest subcommand or option, when one is close.
      for (const auto& line : suggestions_for(app, std::vector<std::string>(argv + 1, argv + argc)))
        std::cerr << "interprobe: " << printable(line) << "\n";
      std::cerr << "Run 'interprobe --help' for the commands and options.\n";
    }
    return with_stdout_written(code == 0 ? kExitOk : kExitUsage);  // --help too
  }

  return with_stdout_written(run_command(commands, options, version));
}
