#pragma once
// What `observe` (or `run`'s telemetry baseline) saw on the GPUs, tied to one workload's ranking:
// a sentence for the verdict block saying whether the observed classes agree with the category
// the ranking puts first, and what would settle it when they do not.
#include <optional>
#include <string>

#include "report/model/bottleneck.hpp"
#include "report/model/telemetry.hpp"

namespace interprobe::bottleneck {

// Null when the section has no GPU. Reads the whole-run window of every GPU and the workload's
// first batch that has a bottleneck.
std::optional<std::string> tie_telemetry(const report::TelemetrySection& telemetry, const report::WorkloadEstimate& workload);

}  // namespace interprobe::bottleneck
