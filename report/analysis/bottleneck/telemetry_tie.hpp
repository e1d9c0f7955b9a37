#pragma once
// What `observe` (or `run`'s telemetry baseline) saw on the GPUs, tied to one workload's ranking:
// a sentence for the verdict block saying whether the observed classes agree with the category
// the ranking puts first, and what would settle it when they do not.
#include <optional>
#include <string>

#include "model/bottleneck.hpp"
#include "model/telemetry.hpp"

namespace interprobe::bottleneck {

// Null when the section has no GPU. Reads the whole-run window of every GPU and the workload's
// first batch that has a bottleneck.
std::optional<std::string> tie_telemetry(const report::TelemetrySection& telemetry, const report::WorkloadEstimate& workload);

// The verdict's clause for GPUs observed busy at partial power (most GPUs' whole-run window at
// >= 90% utilization and <= 70% of the power limit, the seed's 100% at 55%): the step's time goes
// to kernels that occupy the GPU without loading it, so what the model leaves unexplained is
// latency or launch time, not weights streamed at full bandwidth. Null otherwise.
std::optional<std::string> busy_at_partial_power(const report::TelemetrySection& telemetry);

// Joins what `observe` saw to each workload's verdict: the tie line, and the clause above.
void join_telemetry(const report::TelemetrySection& telemetry, report::WorkloadEstimate& workload);

}  // namespace interprobe::bottleneck
