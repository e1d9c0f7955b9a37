#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/session.hpp"
#include "report/model/json.hpp"

namespace interprobe::cli {

Command add_report_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("report", "Re-render a saved JSON report (text, markdown or json)");
  auto file = std::make_shared<std::string>();
  c.app->add_option("FILE", *file, "Report written by `interprobe run -o FILE`")->required();
  c.execute = [&options, file]() {
    report::Report r = report::read_report_file(*file);
    emit_report(r, options);
    return fail_on_exit_code(r, options);
  };
  return c;
}

}  // namespace interprobe::cli
