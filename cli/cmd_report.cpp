#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/session.hpp"
#include "common/output_file.hpp"
#include "report/model/json.hpp"
#include "report/render/renderers.hpp"

namespace interprobe::cli {

Command add_report_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("report", "Re-render a saved JSON report (text, markdown, html or json); with --format html, -o FILE receives the page");
  auto file = std::make_shared<std::string>();
  c.app->add_option("FILE", *file, "Report written by `interprobe run -o FILE`")->required();
  c.execute = [&options, file]() {
    report::Report r = report::read_report_file(*file);
    if (options.format == "html" && options.output) {
      // The saved JSON already exists: here -o is where the page goes (`report r.json --format html -o r.html`).
      check_output_target(*options.output, "-o", ExistingOutput::replace_regular);
      write_output_file(*options.output, render::render_html(r, options.views), "-o", ExistingOutput::replace_regular);
    } else {
      emit_report(r, options);
    }
    return fail_on_exit_code(r, options);
  };
  return c;
}

}  // namespace interprobe::cli
