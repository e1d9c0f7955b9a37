#include "probes/runner/probe_runner.hpp"

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/interrupt.hpp"
#include "common/progress.hpp"
#include "common/stopwatch.hpp"

namespace interprobe {

RunOutcome run_probes(const std::vector<std::unique_ptr<Probe>>& probes, const ProbeContext& ctx,
                      report::Report& report, const AfterProbe& after_each) {
  RunOutcome outcome;
  for (const auto& probe : probes) {
    report::ProbeRecord record;
    record.name = probe->name();
    if (outcome.interrupted || interrupt_requested()) {
      outcome.interrupted = true;
      record.status = report::ProbeStatus::skipped;
      record.reason = "interrupted";
      report.probes.push_back(record);
      continue;
    }
    ctx.progress.update(fmt::format("{}...", record.name));
    Stopwatch clock;
    try {
      probe->run(ctx, report);
      record.status = report::ProbeStatus::ok;
    } catch (const InterruptedError&) {
      outcome.interrupted = true;
      record.status = report::ProbeStatus::skipped;
      record.reason = "interrupted";
    } catch (const SkippedError& e) {
      record.status = report::ProbeStatus::skipped;
      record.reason = e.what();
    } catch (const UnsupportedError& e) {
      record.status = report::ProbeStatus::unsupported;
      record.reason = e.what();
    } catch (const InputError& e) {
      record.status = report::ProbeStatus::failed;
      record.reason = e.what();
      if (!outcome.input_error) outcome.input_error = e.what();
    } catch (const std::exception& e) {
      record.status = report::ProbeStatus::failed;
      record.reason = e.what();
    } catch (...) {
      record.status = report::ProbeStatus::failed;
      record.reason = "unknown exception";
    }
    record.duration_s = clock.elapsed_s();
    report.probes.push_back(record);
    if (after_each) after_each(report);
  }
  ctx.progress.clear();
  return outcome;
}

}  // namespace interprobe
