// `observe` as a probe: the session gives it the report header, -o, exit 4 when it cannot run
// and exit 130 on Ctrl-C with what was sampled so far classified.
#include "probes/telemetry/telemetry_probe.hpp"

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "interprobe/build_config.hpp"
#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/interrupt.hpp"
#include "probes/telemetry/classify.hpp"
#include "probes/telemetry/nvml_sampler.hpp"

namespace interprobe {

namespace {

// Live NVML samples for duration_s, stopped early (interrupted set) on Ctrl-C.
telemetry::Trace sample(double duration_s, double interval_s, bool& interrupted, std::optional<std::string>& simulated) {
#if INTERPROBE_HAVE_NVML
  telemetry::NvmlSampler sampler(interval_s);
  simulated = sampler.simulated();
  sampler.start();
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(duration_s);
  while (std::chrono::steady_clock::now() < until && !(interrupted = interrupt_requested()))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return sampler.stop();
#else
  (void)duration_s, (void)interval_s, (void)interrupted, (void)simulated;
  throw UnsupportedError("NVML support compiled out: rebuild with -DINTERPROBE_WITH_NVML=ON");
#endif
}

class TelemetryProbe : public Probe {
 public:
  explicit TelemetryProbe(TelemetryOptions o) : o_(std::move(o)) {}
  std::string name() const override { return "telemetry"; }

  void run(const ProbeContext& ctx, report::Report& report) override {
    if (o_.replay) return classify(telemetry::read_trace_file(*o_.replay), report::TelemetrySource::replay, *o_.replay, report);
    if (!ctx.root.is_live()) {
      FileRead recorded = ctx.root.read(kTelemetryTracePath, 256u << 20);
      if (!recorded.ok())
        throw UnsupportedError(fmt::format("replaying a --root tree without a telemetry trace at {} ({}); `interprobe "
                                           "snapshot` on the live machine records one there",
                                           kTelemetryTracePath, to_string(recorded.failure)));
      auto trace = telemetry::parse_trace(*recorded.content, kTelemetryTracePath);
      return classify(trace, report::TelemetrySource::replay, kTelemetryTracePath, report);
    }
    sample_live(report);
  }

 private:
  void sample_live(report::Report& report) {
    bool interrupted = false;
    std::optional<std::string> simulated;
    telemetry::Trace trace = sample(o_.duration_s, o_.interval_s, interrupted, simulated);
    if (o_.record) telemetry::write_trace_file(*o_.record, trace);
    classify(trace, simulated ? report::TelemetrySource::simulated : report::TelemetrySource::live, o_.record, report);
    if (interrupted) throw InterruptedError();
  }

  void classify(const telemetry::Trace& trace, report::TelemetrySource source, std::optional<std::string> label,
                report::Report& report) const {
    report.telemetry = telemetry::classify_trace(trace, telemetry::ClassifyOptions{o_.window_s});
    report.telemetry->source = source;
    report.telemetry->trace = std::move(label);
  }

  TelemetryOptions o_;
};

}  // namespace

void validate_telemetry_options(const TelemetryOptions& o) {
  if (!(o.interval_s >= 0.01 && o.interval_s <= 10))
    throw InputError(fmt::format("--interval {} s: give 10ms to 10s (NVML utilization updates every 1/6 to 1 s)", o.interval_s));
  if (!(o.duration_s > 0 && o.duration_s <= 86400)) throw InputError(fmt::format("--duration {} s: give above 0, at most 24h", o.duration_s));
  if (!(o.window_s >= 1 && o.window_s <= 86400)) throw InputError(fmt::format("--window {} s: give 1s or more (rules need >= 1 s)", o.window_s));
  if (o.record && o.replay) throw InputError("--record and --replay: give one (a replay reads a recording, it samples nothing)");
}

std::unique_ptr<Probe> make_telemetry_probe(const TelemetryOptions& options) { return std::make_unique<TelemetryProbe>(options); }

std::string record_live_trace_json(double duration_s, double interval_s) {
  bool interrupted = false;
  std::optional<std::string> simulated;
  telemetry::Trace trace = sample(duration_s, interval_s, interrupted, simulated);
  if (interrupted) throw InterruptedError();
  return telemetry::trace_to_json_text(trace);
}

}  // namespace interprobe
