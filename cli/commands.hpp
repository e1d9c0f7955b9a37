#pragma once
// One file per subcommand; each registers itself on the app and returns how to execute it.
#include <functional>

#include "cli/global_options.hpp"

namespace CLI {
class App;
}

namespace interprobe::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> execute;
};

Command add_run_command(CLI::App& app, GlobalOptions& options);
Command add_report_command(CLI::App& app, GlobalOptions& options);

int print_version(const GlobalOptions& options);

}  // namespace interprobe::cli
