#pragma once
// The bottlenecks section: each requested workload's decode step priced from a report at each
// batch size, ranked, and judged — the verdict sentence, the one lever, the confidence and why,
// and what was not measured. `run` and `analyze` both come here; views only print the result.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/analysis/workload/model_config.hpp"
#include "model/report.hpp"

namespace interprobe::bottleneck {

// A speed seen in production: step time at a concurrency (ITL, or concurrency / tokens per s).
struct Observation {
  std::int64_t concurrency = 1;
  double step_us = 0;
};

struct WorkloadRequest {
  workload::ModelConfig model;
  std::string config;  // the file it came from, as given
  std::int64_t tp = 1;
  bool expert_parallel = false;  // --ep: whole experts over the TP ranks
  std::vector<std::int64_t> batches{1, 8, 64};
  std::int64_t context_tokens = 4096;
  std::vector<Observation> observed;
};

struct AnalyzeOptions {
  // --assume's text: gpu=NAME[,link=KEY][,engine=KEY][,graphs=on|off][,host_us=N] (assumed_specs.hpp);
  // InputError when a part is unknown.
  std::optional<std::string> assume;
};

// The workload's identity (model, config, dtype, TP, context) with nothing priced yet.
report::WorkloadEstimate describe_workload(const WorkloadRequest& request);

// Throws InputError when --tp does not fit the model or --assume names no known GPU.
report::WorkloadEstimate estimate_workload(const report::Report& report, const WorkloadRequest& request,
                                           const AnalyzeOptions& options = {});
report::BottleneckSection analyze_bottlenecks(const report::Report& report, const std::vector<WorkloadRequest>& requests,
                                              const AnalyzeOptions& options = {});

}  // namespace interprobe::bottleneck
