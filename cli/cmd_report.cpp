#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/session.hpp"
#include "common/output_file.hpp"
#include "report/model/json.hpp"
#include "report/render/prometheus.hpp"
#include "report/render/renderers.hpp"

namespace interprobe::cli {

Command add_report_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("report", "Re-render a saved JSON report (text, markdown, html, prometheus or json); with "
                                       "--format html or prometheus, -o FILE receives the page or the metrics");
  auto file = std::make_shared<std::string>();
  c.app->add_option("FILE", *file, "Report written by `interprobe run -o FILE`")->required();
  c.execute = [&options, file]() {
    report::Report r = report::read_report_file(*file);
    if ((options.format == "html" || options.format == "prometheus") && options.output) {
      // The saved JSON already exists: here -o is where the page (`report r.json --format html -o r.html`) or
      // the metrics go, atomically, as node_exporter's textfile collector wants (`-o .../interprobe.prom`).
      check_output_target(*options.output, "-o", ExistingOutput::replace_regular);
      std::string text = options.format == "html" ? render::render_html(r, options.views) : render::render_prometheus(r);
      write_output_file(*options.output, text, "-o", ExistingOutput::replace_regular);
    } else {
      emit_report(r, options);
    }
    return fail_on_exit_code(r, options);
  };
  return c;
}

}  // namespace interprobe::cli
