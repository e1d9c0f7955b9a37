#pragma once
// Runs probes one after another, each inside its own error boundary: a failed or unsupported
// probe is recorded with its reason and the others go on. Ctrl-C marks the running probe and
// all later ones `skipped: interrupted`.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "probes/runner/probe.hpp"

namespace interprobe {

struct RunOutcome {
  bool interrupted = false;
  std::optional<std::string> input_error;  // first probe that failed on bad input (exit 2)
};

using AfterProbe = std::function<void(const report::Report&)>;

RunOutcome run_probes(const std::vector<std::unique_ptr<Probe>>& probes, const ProbeContext& ctx,
                      report::Report& report, const AfterProbe& after_each = {});

}  // namespace interprobe
