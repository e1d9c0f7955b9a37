// `interprobe virt`: the virtualization probe alone. It always runs (never exit 4); exit 2 when
// the --root tree has a malformed cpuid.txt (the report is still written, with the warning).
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/session.hpp"
#include "probes/virt/virt_probe.hpp"

namespace interprobe::cli {

Command add_virt_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("virt",
                             "Hypervisor and container (systemd-detect-virt ids), product, machine type, the evidence "
                             "behind them, and how each NVIDIA GPU was passed through");
  c.execute = [&options]() {
    std::vector<std::unique_ptr<Probe>> probes;
    probes.push_back(make_virt_probe());
    // The probe opens NVML only when it finds NVIDIA GPUs; the header lists only what was opened.
    return run_session(options, probes, UnsupportedPolicy::exit_code_4).exit_code;
  };
  return c;
}

}  // namespace interprobe::cli
