// Summaries of the counters beside each GPU measurement. A measurement may run in several spans
// (a bandwidth size visited once per pass): each span is aggregated on its own, so counter rates
// never bridge the time between visits, and the spans' averages are merged weighted by duration.
#include "probes/telemetry/measurement_recorder.hpp"

#include <fmt/format.h>

#include "interprobe/build_config.hpp"
#include "common/errors.hpp"
#include "probes/telemetry/classify.hpp"
#include "probes/telemetry/nvml_sampler.hpp"

namespace interprobe::telemetry {

namespace {

using Averages = report::TelemetryAverages;
constexpr std::optional<double> Averages::*kFields[] = {
    &Averages::utilization_fraction,   &Averages::power_w,                &Averages::power_limit_fraction,
    &Averages::sm_clock_fraction,      &Averages::memory_clock_fraction,  &Averages::power_cap_sample_fraction,
    &Averages::thermal_sample_fraction, &Averages::power_cap_time_fraction, &Averages::thermal_time_fraction,
    &Averages::pcie_gbps,              &Averages::pcie_capacity_fraction, &Averages::nvlink_gbps,
    &Averages::nvlink_capacity_fraction, &Averages::sm_active_fraction,   &Averages::sm_occupancy_fraction,
    &Averages::tensor_active_fraction, &Averages::dram_active_fraction};

// Duration-weighted means of the spans' averages, field by field (a field a span lacks is left out).
struct Merge {
  double sum[std::size(kFields)] = {}, weight[std::size(kFields)] = {};
  std::int64_t samples = 0;

  void add(const Averages& a, double weight_s, std::size_t n) {
    samples += static_cast<std::int64_t>(n);
    for (std::size_t f = 0; f < std::size(kFields); ++f)
      if (const auto& v = a.*kFields[f]) sum[f] += *v * weight_s, weight[f] += weight_s;
  }
  Averages result() const {
    Averages a;
    for (std::size_t f = 0; f < std::size(kFields); ++f)
      if (weight[f] > 0) a.*kFields[f] = sum[f] / weight[f];
    return a;
  }
};

// The GPU the measurement loaded most: highest utilization, then highest power.
bool busier(const Averages& a, const Averages& b) {
  double ua = a.utilization_fraction.value_or(-1), ub = b.utilization_fraction.value_or(-1);
  if (ua != ub) return ua > ub;
  return a.power_w.value_or(-1) > b.power_w.value_or(-1);
}

}  // namespace

MeasurementRecorder::MeasurementRecorder(double interval_s) : interval_s_(interval_s) {}
MeasurementRecorder::~MeasurementRecorder() = default;

void MeasurementRecorder::start() {
  if (started_) return;
  started_ = true;
#if !INTERPROBE_HAVE_NVML
  unavailable_ = "NVML support compiled out: rebuild with -DINTERPROBE_WITH_NVML=ON";
  return;
#endif
  try {
    sampler_ = std::make_unique<NvmlSampler>(interval_s_);
    sampler_->start();
  } catch (const UnsupportedError& e) {
    sampler_.reset();
    unavailable_ = e.what();
  }
}

report::MeasurementTelemetry MeasurementRecorder::summarize(const std::vector<TimeSpan>& spans) const {
  report::MeasurementTelemetry out;
  for (const auto& s : spans) out.span_s += std::chrono::duration<double>(s.end - s.begin).count();
  if (!sampler_) {
    out.reason = unavailable_ ? "no telemetry: " + *unavailable_ : std::string("no telemetry: the sampler was not started");
    return out;
  }
  auto gpus = sampler_->gpus();
  std::vector<Merge> merged(gpus.size());
  for (const auto& span : spans) {
    double from = std::chrono::duration<double>(span.begin - sampler_->started_at()).count();
    double to = std::chrono::duration<double>(span.end - sampler_->started_at()).count();
    auto samples = sampler_->samples_between(from, to);
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      std::vector<const TraceSample*> mine;
      for (const auto& s : samples)
        if (s.gpu == gpus[g].index) mine.push_back(&s);
      if (!mine.empty()) merged[g].add(aggregate(gpus[g], mine), to - from, mine.size());
    }
  }
  std::optional<std::size_t> pick;
  for (std::size_t g = 0; g < gpus.size(); ++g)
    if (merged[g].samples > 0 && (!pick || busier(merged[g].result(), merged[*pick].result()))) pick = g;
  if (!pick) {
    out.reason = fmt::format("measured for {:.3f} s in {} span(s), none holding a sample: shorter than one sample interval ({:.3f} s)",
                             out.span_s, spans.size(), sampler_->interval_s());
    return out;
  }
  out.gpu = gpus[*pick].index;
  out.samples = merged[*pick].samples;
  out.averages = merged[*pick].result();
  return out;
}

}  // namespace interprobe::telemetry
