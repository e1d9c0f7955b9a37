// GPM entry points of the simulated libnvidia-ml.so.1 (nvmlGpm*, docs/reference.md §11). A sample
// records the time and the busy-time integral; metrics between two samples are the description's
// gpm_* fractions (at 100 % utilization) times the utilization over that span, in percent, as
// NVML gives them. nvml.gpm switches support: "auto" (compute capability >= 9, not a vGPU),
// "unsupported", "probe_fails" (the support query says yes, nvmlGpmSampleGet fails).
#include <cstring>
#include <mutex>
#include <set>

#include "sim_nvml_state.hpp"

namespace {

using namespace interprobe::sim::nvml;
using Return = int;
constexpr Return kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kArgumentVersionMismatch = 25;
constexpr unsigned kOldestMetricMax = 98;  // NVML_GPM_METRIC_MAX of the first GPM header (r520)

struct Sample {
  int device = -1;  // -1: allocated, never filled
  double t_s = 0, busy_s = 0;
};

struct Support {
  unsigned version, isSupportedDevice;
};
struct Metric {
  unsigned metricId;
  Return nvmlReturn;
  double value;
  char *shortName, *longName, *unit;
};
struct MetricsGet {
  unsigned version, numMetrics;
  Sample *sample1, *sample2;
  Metric metrics[kOldestMetricMax];  // callers may reserve more; the simulator reads numMetrics
};

std::mutex g_mutex;
std::set<Sample*> g_samples;  // live allocations: a freed or foreign pointer is an invalid argument

bool supported(Device* device) {
  const auto* d = device_spec(device);
  const auto& n = nvml_spec();
  return d && n.gpm != "unsupported" && d->cc_major >= 9 && n.virtualization_mode != 2;
}

bool live(Sample* s) { return s && g_samples.count(s); }

}  // namespace

#define SIM_API extern "C" __attribute__((visibility("default")))

SIM_API Return nvmlGpmQueryDeviceSupport(Device* device, Support* out) {
  if (!device_spec(device) || !out) return kInvalidArgument;
  if (out->version != 1) return kArgumentVersionMismatch;
  out->isSupportedDevice = supported(device) ? 1 : 0;
  return kSuccess;
}

SIM_API Return nvmlGpmSampleAlloc(Sample** out) {
  if (!out) return kInvalidArgument;
  std::lock_guard lock(g_mutex);
  *out = new Sample;
  g_samples.insert(*out);
  return kSuccess;
}

SIM_API Return nvmlGpmSampleFree(Sample* sample) {
  std::lock_guard lock(g_mutex);
  if (!live(sample)) return kInvalidArgument;
  g_samples.erase(sample);
  delete sample;
  return kSuccess;
}

SIM_API Return nvmlGpmSampleGet(Device* device, Sample* sample) {
  std::lock_guard lock(g_mutex);
  if (!device_spec(device) || !live(sample)) return kInvalidArgument;
  if (!supported(device) || nvml_spec().gpm == "probe_fails") return kNotSupported;
  sample->device = device->index;
  sample->t_s = now_s();
  sample->busy_s = busy_seconds_now();
  return kSuccess;
}

SIM_API Return nvmlGpmMetricsGet(MetricsGet* request) {
  std::lock_guard lock(g_mutex);
  if (!request) return kInvalidArgument;
  if (request->version != 1) return kArgumentVersionMismatch;
  Sample *a = request->sample1, *b = request->sample2;
  if (!live(a) || !live(b) || a->device < 0 || a->device != b->device || !(b->t_s > a->t_s)) return kInvalidArgument;
  if (request->numMetrics > kOldestMetricMax) return kInvalidArgument;
  const auto& n = nvml_spec();
  double busy = (b->busy_s - a->busy_s) / (b->t_s - a->t_s);  // mean utilization over the span, 0..1
  for (unsigned i = 0; i < request->numMetrics; ++i) {
    Metric& m = request->metrics[i];
    m.nvmlReturn = kSuccess;
    m.shortName = m.longName = m.unit = nullptr;
    switch (m.metricId) {
      case 2: m.value = 100 * n.gpm_sm_active * busy; break;      // SM_UTIL
      case 3: m.value = 100 * n.gpm_sm_occupancy * busy; break;   // SM_OCCUPANCY
      case 5: m.value = 100 * n.gpm_tensor_active * busy; break;  // ANY_TENSOR_UTIL
      case 10: m.value = 100 * n.gpm_dram_active * busy; break;   // DRAM_BW_UTIL
      default: m.nvmlReturn = kNotSupported, m.value = 0;
    }
  }
  return kSuccess;
}
