#include "cli/global_options.hpp"

#include <CLI/CLI.hpp>

#include "common/dynlib.hpp"

namespace interprobe::cli {

void add_global_options(CLI::App& app, GlobalOptions& o) {
  app.add_option("--root", o.root, "Read machine state from DIR (a fixture or snapshot tree) instead of this machine")
      ->type_name("DIR");
  app.add_option("-o,--output", o.output,
                 "Write the JSON report to FILE (atomically), on every command; the rendered report goes to --export-*")
      ->type_name("FILE");
  app.add_option("--export-html", o.export_html, "Also write the report's HTML page to FILE (atomically)")->type_name("FILE");
  app.add_option("--export-markdown", o.export_markdown, "Also write the report as markdown to FILE (atomically)")
      ->type_name("FILE");
  app.add_option("--export-prometheus", o.export_prometheus,
                 "Also write the report's metrics to FILE (atomically), for node_exporter's textfile collector")
      ->type_name("FILE");
  auto* json = app.add_flag("--json", o.json, "Print the JSON report on stdout");
  app.add_option("--format", o.format,
                 "Output format on stdout; prometheus: the report's metrics for node_exporter's textfile collector")
      // The type name lists the choices; the validator's own list would print them twice in --help.
      ->check(CLI::IsMember({"text", "json", "markdown", "html", "prometheus"}).description(""))
      ->excludes(json)
      ->type_name("text|json|markdown|html|prometheus");
  app.add_flag("-q,--quiet", o.quiet, "No progress line on stderr");
  app.add_flag("--no-color", o.no_color, "No colour (also when NO_COLOR is set)");
  app.add_flag("-v,--verbose", o.verbose,
               "The report header lists every vendor library installed (path, version from its file) with a row "
               "each, not only those a probe opened and the missing ones");
  app.add_option("--fail-on", o.fail_on,
                 "Exit 1 (after the report is written) when a finding at or above this severity is present")
      ->check(CLI::IsMember({"never", "info", "warn", "fail"}).description(""))
      ->type_name("never|info|warn|fail");
  app.add_option("--nvml-lib", o.nvml_lib, "Load NVML from PATH (env INTERPROBE_NVML_LIB)")->type_name("PATH");
  app.add_option("--nccl-lib", o.nccl_lib, "Load NCCL from PATH (env INTERPROBE_NCCL_LIB)")->type_name("PATH");
  app.add_option("--cublaslt-lib", o.cublaslt_lib, "Load cuBLASLt from PATH (env INTERPROBE_CUBLASLT_LIB)")
      ->type_name("PATH");
  app.add_option("--cuda-lib", o.cuda_lib, "Load the CUDA driver library from PATH (env INTERPROBE_CUDA_LIB)")
      ->type_name("PATH");
}

void apply_library_overrides(const GlobalOptions& o) {
  if (o.nvml_lib) set_library_override(VendorLibrary::nvml, *o.nvml_lib);
  if (o.nccl_lib) set_library_override(VendorLibrary::nccl, *o.nccl_lib);
  if (o.cublaslt_lib) set_library_override(VendorLibrary::cublaslt, *o.cublaslt_lib);
  if (o.cuda_lib) set_library_override(VendorLibrary::cuda_driver, *o.cuda_lib);
}

}  // namespace interprobe::cli
