#pragma once
// The options that choose the workloads a report is ranked for (`run` and `analyze` share them):
// models, TP, batches, context, the observed speed, and published specs to assume.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/analysis/bottleneck/analyze.hpp"

namespace CLI {
class App;
}

namespace interprobe::cli {

struct WorkloadOptions {
  std::vector<std::string> models;  // config.json files; empty: the built-in examples
  std::optional<std::int64_t> tp;
  bool ep = false;
  std::optional<std::string> batch, itl_ms, tokens_per_s, concurrency, assume;
  std::int64_t context_tokens = 4096;
};

void add_workload_options(CLI::App* app, WorkloadOptions& options);

// Everything that can be checked before probing: the configs read, the numbers parsed, --tp
// fitted to each model. InputError (exit 2) naming the option or file otherwise.
struct PreparedWorkloads {
  std::vector<bottleneck::WorkloadRequest> requests;  // tp filled in when --tp was given
  bottleneck::AnalyzeOptions analyze;
  bool tp_given = false;
};
PreparedWorkloads prepare_workloads(const WorkloadOptions& options);

// The TP a report measured: the most ranks of an all-reduce sweep, else its GPUs, else 1.
std::int64_t measured_tp(const report::Report& report);

// Ranks the report for the prepared workloads; a model the TP does not fit (a default TP from
// the machine) becomes a workload whose verdict says so rather than an error.
report::BottleneckSection rank_workloads(const report::Report& report, PreparedWorkloads prepared);

}  // namespace interprobe::cli
