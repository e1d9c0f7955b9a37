#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/session.hpp"
#include "common/errors.hpp"
#include "common/output_file.hpp"
#include "common/text.hpp"
#include "model/json.hpp"
#include "report/render/prometheus.hpp"
#include "report/render/renderers.hpp"

namespace interprobe::cli {

Command add_report_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("report", "Re-render a saved JSON report (text, markdown, html, prometheus or json); "
                                       "--export-html/--export-markdown/--export-prometheus FILE write it to a file");
  auto file = std::make_shared<std::string>();
  c.app->add_option("FILE", *file, "Report written by `interprobe run -o FILE`")->required();
  c.execute = [&options, file]() {
    // Until issue 36, `report --format html|prometheus -o FILE` wrote the page or the metrics to FILE
    // while every other command wrote JSON there: refused, naming the option that does it now.
    if ((options.format == "html" || options.format == "prometheus") && options.output)
      throw InputError(fmt::format("report --format {0} -o {1}: -o always writes the JSON report; write the {2} with "
                                   "--export-{0} {1}",
                                   options.format, printable(*options.output), options.format == "html" ? "page" : "metrics"));
    report::Report r = report::read_report_file(*file);
    emit_report(r, options);
    return fail_on_exit_code(r, options);
  };
  return c;
}

}  // namespace interprobe::cli
