#pragma once
#include <optional>
#include <string>

#include "report/render/document.hpp"

namespace CLI {
class App;
}

namespace interprobe::cli {

struct GlobalOptions {
  std::optional<std::string> root;    // --root DIR
  std::optional<std::string> output;  // -o FILE: always the JSON report (fleet: the fleet report; snapshot: the archive)
  // --export-html/--export-markdown/--export-prometheus FILE: the report rendered, written atomically.
  std::optional<std::string> export_html, export_markdown, export_prometheus;
  bool json = false;
  std::string format = "text";
  bool quiet = false;
  bool no_color = false;
  bool verbose = false;
  std::string fail_on = "never";  // info, warn, fail: exit 1 when a finding reaches it  // the report header lists every vendor library, not only those opened
  std::optional<std::string> nvml_lib, nccl_lib, cublaslt_lib, cuda_lib;
  bool report_on_stdout = true;  // false: the command prints something else (check)
  render::ViewOptions views;  // set by subcommand options (topo --tree)
};

void add_global_options(CLI::App& app, GlobalOptions& options);
// Applies the library overrides to the loader.
void apply_library_overrides(const GlobalOptions& options);

}  // namespace interprobe::cli
