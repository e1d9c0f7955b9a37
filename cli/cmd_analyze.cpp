// `interprobe analyze REPORT.json`: ranks communication against compute offline, from a report
// saved elsewhere (e.g. on a GPU machine), for the workloads given; -o writes the updated report.
#include <fstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/session.hpp"
#include "cli/workload_options.hpp"
#include "common/errors.hpp"
#include "probes/telemetry/classify.hpp"
#include "report/analysis/findings.hpp"
#include "model/json.hpp"

namespace interprobe::cli {

namespace {

// What `observe` saw while the workload was served: its report (`observe -o FILE`) or its raw
// recording (`observe --record FILE`, classified here by the same rules as `observe --replay`).
report::TelemetrySection observed_telemetry(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("--observe {}: cannot open it; give what `interprobe observe -o FILE` or "
                                        "`observe --record FILE` wrote",
                                        path));
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  if (head.find(telemetry::kTraceFormat) != std::string::npos) {
    auto trace = telemetry::read_trace_file(path);
    auto section = telemetry::classify_trace(trace, telemetry::ClassifyOptions{});
    section.source = report::TelemetrySource::replay;
    // A trace not read through NVML (a fixture, a simulation) says so where the report names it.
    section.trace = trace.source == "nvml" ? path : fmt::format("{} (source: {})", path, trace.source);
    return section;
  }
  report::Report observed = report::read_report_file(path);
  if (!observed.telemetry || observed.telemetry->gpus.empty())
    throw InputError(fmt::format("--observe {}: the report has no telemetry of any GPU; record it on the serving machine "
                                 "with `interprobe observe --duration 60s -o FILE` while the workload runs",
                                 path));
  return *observed.telemetry;
}

}  // namespace

Command add_analyze_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("analyze", "Rank communication against compute for workloads, from a saved report");
  auto file = std::make_shared<std::string>();
  auto workloads = std::make_shared<WorkloadOptions>();
  c.app->add_option("REPORT", *file, "Report written by `interprobe run -o FILE` (or bw/allreduce/compute)")->required();
  add_workload_options(c.app, *workloads);
  auto observe = std::make_shared<std::string>();
  c.app->add_option("--observe", *observe,
                    "What `interprobe observe` saw while the workload was served (its -o report or its --record trace): "
                    "its GPU classes join the verdict");
  c.execute = [&options, file, workloads, observe]() {
    auto prepared = prepare_workloads(*workloads);  // bad options and configs before the report is read
    std::optional<report::TelemetrySection> observed;
    if (!observe->empty()) observed = observed_telemetry(*observe);
    report::Report r = report::read_report_file(*file);
    if (observed) r.telemetry = std::move(observed);
    r.bottlenecks = rank_workloads(r, std::move(prepared));
    r.findings = analysis::derive_findings(r);
    emit_report(r, options);
    return fail_on_exit_code(r, options);
  };
  return c;
}

}  // namespace interprobe::cli
