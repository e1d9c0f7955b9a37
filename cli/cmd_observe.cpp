// `interprobe observe`: samples every GPU's NVML counters beside a running workload (reads only;
// no GPU state is touched) and says per window what limited each GPU, with the rule and numbers;
// `--replay FILE` classifies a recording made with `--record FILE` (no GPU needed).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/session.hpp"
#include "cli/workload_options.hpp"
#include "common/errors.hpp"
#include "common/output_file.hpp"
#include "common/text.hpp"
#include "probes/telemetry/telemetry_probe.hpp"

namespace interprobe::cli {

namespace {

// "30s", "100ms", "2m", "1h" or plain seconds.
double parse_duration_s(const std::string& text, const char* option) {
  std::string s(trim(text));
  static const std::pair<const char*, double> kUnits[] = {{"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}};
  double scale = 1;
  for (const auto& [suffix, factor] : kUnits) {
    std::string_view sv(s), suf(suffix);
    if (sv.size() > suf.size() && sv.substr(sv.size() - suf.size()) == suf) {
      scale = factor;
      s.resize(s.size() - suf.size());
      break;
    }
  }
  auto v = parse_double(s);
  if (!v) throw InputError(fmt::format("{} '{}': not a duration; give e.g. 30s, 100ms, 2m", option, text));
  return *v * scale;
}

}  // namespace

Command add_observe_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("observe",
                             "Sample GPU counters (NVML) beside a running workload and classify what limits each GPU");
  struct Raw {
    std::string duration = "30s", interval = "100ms", window = "5s";
    std::optional<std::string> record, replay;
  };
  auto raw = std::make_shared<Raw>();
  c.app->add_option("--duration", raw->duration, "How long to sample (default 30s)");
  c.app->add_option("--interval", raw->interval, "Time between samples (default 100ms)");
  c.app->add_option("--window", raw->window, "Classification window (default 5s, at least 1s); the whole run is also one window");
  c.app->add_option("--record", raw->record, "Also write the raw samples to FILE (replay them with --replay FILE)");
  c.app->add_option("--replay", raw->replay, "Classify a recorded trace instead of sampling (no GPU needed)");
  // --model/--tp/--batch: the classes beside the bottleneck ranking of those workloads (the verdict block).
  auto workloads = std::make_shared<WorkloadOptions>();
  add_workload_options(c.app, *workloads);
  c.execute = [&options, raw, workloads]() {
    TelemetryOptions o;
    o.duration_s = parse_duration_s(raw->duration, "--duration");
    o.interval_s = parse_duration_s(raw->interval, "--interval");
    o.window_s = parse_duration_s(raw->window, "--window");
    o.record = raw->record;
    o.replay = raw->replay;
    validate_telemetry_options(o);
    if (o.record) check_output_target(*o.record, "--record", ExistingOutput::replace_regular);
    std::optional<PreparedWorkloads> prepared;  // bad options and configs before sampling
    if (!workloads->models.empty() || workloads->tp) prepared = prepare_workloads(*workloads);
    std::vector<std::unique_ptr<Probe>> probes;
    probes.push_back(make_telemetry_probe(o));
    auto rank = [&prepared](report::Report& r) {
      if (prepared && r.telemetry) r.bottlenecks = rank_workloads(r, std::move(*prepared));
    };
    return run_session(options, probes, UnsupportedPolicy::exit_code_4, rank).exit_code;
  };
  return c;
}

}  // namespace interprobe::cli
