#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/features.hpp"
#include "cli/session.hpp"
#include "common/text.hpp"
#include "probes/gpu/cuda_driver.hpp"
#include "report/render/prometheus.hpp"

namespace interprobe::cli {

int print_version(const GlobalOptions&) {
  report::ToolInfo tool = tool_info(/*list_all_libraries=*/true, /*live=*/true);
  std::cout << "interprobe " << tool.version << "\n";
  std::cout << "compiled in:";
  for (const auto& [name, on] : tool.features.list()) std::cout << " " << name << "=" << (on ? "yes" : "no");
  // Not a probe's library, so not in the report's feature list: what --format prometheus needs.
  std::cout << " prometheus=" << (render::prometheus_available() ? "yes" : "no") << "\n";
  auto line = [&](const char* label, const char* key) {
    auto it = tool.libraries.find(key);
    if (it == tool.libraries.end()) return;
    const auto& lib = it->second;
    std::string text;
    if (lib.version) text = *lib.version;
    // The library itself is not loaded for this: its version comes from its file.
    const char* read_from = report::version_read_from_file(lib);
    std::string from = read_from ? fmt::format("from the {}, ", read_from) : "";
    if (lib.found && lib.path) text += (text.empty() ? "" : " ") + fmt::format("({}{})", from, *lib.path);
    if (lib.driver_version) text += fmt::format(", driver {}", *lib.driver_version);
    if (!lib.found) text = "not found";
    if (lib.reason) text += fmt::format(" - {}", *lib.reason);
    std::cout << fmt::format("{:<13} {}\n", label, printable(text));
  };
  line("cuda driver:", "cuda");
  std::cout << fmt::format("{:<13} {} or newer (kernels: PTX ISA 8.0)\n", "cuda needs:", cu::minimum_driver_text());
  line("cuda runtime:", "cudart");
  line("nvml:", "nvml");
  line("nccl:", "nccl");
  line("cublaslt:", "cublaslt");
  return 0;
}

}  // namespace interprobe::cli
