// GPM through NVML's dlopen'd entry points (nvmlGpm*, driver r520+). Each supported GPU keeps two
// sample buffers: the previous reading and the next; metrics are computed between them and the
// buffers swap, so a tick costs one nvmlGpmSampleGet and one nvmlGpmMetricsGet per GPU.
#include "probes/telemetry/gpm.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

namespace interprobe::telemetry {

namespace {

using Clock = std::chrono::steady_clock;

struct Slot {
  nvml::Device device = nullptr;
  bool on = false;
  nvml::GpmSample prev = nullptr, next = nullptr;
  Clock::time_point prev_at;
};

constexpr unsigned kMetricIds[4] = {nvml::kGpmSmUtil, nvml::kGpmSmOccupancy, nvml::kGpmAnyTensorUtil, nvml::kGpmDramBwUtil};

}  // namespace

struct GpmReader::State {
  nvml::ErrorStringFn* error_string = nullptr;
  nvml::DeviceGetVirtualizationModeFn* virtualization = nullptr;
  nvml::GpmQueryDeviceSupportFn* query = nullptr;
  nvml::GpmSampleAllocFn* alloc = nullptr;
  nvml::GpmSampleFreeFn* free = nullptr;
  nvml::GpmSampleGetFn* get = nullptr;
  nvml::GpmMetricsGetFn* metrics = nullptr;
  std::vector<Slot> slots;
  std::unique_ptr<nvml::GpmMetricsGet> request = std::make_unique<nvml::GpmMetricsGet>();

  std::string error(const char* call, nvml::Return rc) const {
    return fmt::format("{}: {} (code {})", call, error_string ? error_string(rc) : "error", rc);
  }
  std::optional<std::string> first_sample(Slot& slot);
  std::optional<std::string> second_sample(Slot& slot);
  // Metrics between slot.prev and slot.next as fractions (null where NVML refused one).
  nvml::Return between(Slot& slot, std::optional<double> (&out)[4]);
};

GpmReader::GpmReader(const DynamicLibrary& dl, nvml::ErrorStringFn* error_string) : state_(std::make_unique<State>()) {
  auto& s = *state_;
  s.error_string = error_string;
  s.virtualization = dl.symbol<nvml::DeviceGetVirtualizationModeFn>("nvmlDeviceGetVirtualizationMode");
  s.query = dl.symbol<nvml::GpmQueryDeviceSupportFn>("nvmlGpmQueryDeviceSupport");
  s.alloc = dl.symbol<nvml::GpmSampleAllocFn>("nvmlGpmSampleAlloc");
  s.free = dl.symbol<nvml::GpmSampleFreeFn>("nvmlGpmSampleFree");
  s.get = dl.symbol<nvml::GpmSampleGetFn>("nvmlGpmSampleGet");
  s.metrics = dl.symbol<nvml::GpmMetricsGetFn>("nvmlGpmMetricsGet");
}

GpmReader::~GpmReader() {
  for (auto& slot : state_->slots)
    for (auto sample : {slot.prev, slot.next})
      if (sample && state_->free) state_->free(sample);
}

std::optional<std::string> GpmReader::State::first_sample(Slot& slot) {
  int mode = 0;
  if (virtualization && virtualization(slot.device, &mode) == nvml::kSuccess && mode == nvml::kVirtualizationVgpu)
    return std::string("GPM is not available on a fractional vGPU (virtualization mode vgpu)");
  nvml::GpmSupport support{nvml::kGpmSupportVersion, 0};
  if (nvml::Return rc = query(slot.device, &support); rc != nvml::kSuccess) return error("nvmlGpmQueryDeviceSupport", rc);
  if (!support.isSupportedDevice) return std::string("nvmlGpmQueryDeviceSupport: this GPU does not support GPM (Hopper or newer)");
  if (nvml::Return rc = alloc(&slot.prev); rc != nvml::kSuccess) return error("nvmlGpmSampleAlloc", rc);
  if (nvml::Return rc = alloc(&slot.next); rc != nvml::kSuccess) return error("nvmlGpmSampleAlloc", rc);
  if (nvml::Return rc = get(slot.device, slot.prev); rc != nvml::kSuccess) return "live probe: " + error("nvmlGpmSampleGet", rc);
  slot.prev_at = Clock::now();
  return std::nullopt;
}

std::optional<std::string> GpmReader::State::second_sample(Slot& slot) {
  std::optional<double> values[4];
  if (nvml::Return rc = between(slot, values); rc != nvml::kSuccess) return "live probe: " + error("nvmlGpmSampleGet/nvmlGpmMetricsGet", rc);
  if (std::none_of(std::begin(values), std::end(values), [](const auto& v) { return v.has_value(); }))
    return std::string("live probe: nvmlGpmMetricsGet refused SM, occupancy, tensor and DRAM metrics");
  slot.on = true;
  return std::nullopt;
}

nvml::Return GpmReader::State::between(Slot& slot, std::optional<double> (&out)[4]) {
  if (nvml::Return rc = get(slot.device, slot.next); rc != nvml::kSuccess) return rc;
  auto at = Clock::now();
  auto& r = *request;
  r = nvml::GpmMetricsGet{};
  r.version = nvml::kGpmMetricsGetVersion;
  r.numMetrics = 4;
  r.sample1 = slot.prev;
  r.sample2 = slot.next;
  for (unsigned i = 0; i < 4; ++i) r.metrics[i].metricId = kMetricIds[i];
  if (nvml::Return rc = metrics(&r); rc != nvml::kSuccess) return rc;
  for (unsigned i = 0; i < 4; ++i)
    if (r.metrics[i].nvmlReturn == nvml::kSuccess) out[i] = std::clamp(r.metrics[i].value / 100.0, 0.0, 1.0);  // percent
  std::swap(slot.prev, slot.next);
  slot.prev_at = at;
  return nvml::kSuccess;
}

std::vector<std::optional<std::string>> GpmReader::probe(const std::vector<nvml::Device>& devices) {
  auto& s = *state_;
  s.slots.resize(devices.size());
  std::vector<std::optional<std::string>> reasons(devices.size());
  bool any = false;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    s.slots[i].device = devices[i];
    if (!s.query || !s.alloc || !s.free || !s.get || !s.metrics)
      reasons[i] = "this NVML has no GPM entry points (nvmlGpmQueryDeviceSupport: driver r520 or newer)";
    else
      reasons[i] = s.first_sample(s.slots[i]);
    any = any || !reasons[i];
  }
  if (!any) return reasons;
  std::this_thread::sleep_for(std::chrono::duration<double>(kGpmMinSpanS));
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (!reasons[i]) reasons[i] = s.second_sample(s.slots[i]);
  return reasons;
}

nvml::Return GpmReader::read(std::size_t gpu, TraceSample& sample) {
  auto& s = *state_;
  if (gpu >= s.slots.size() || !s.slots[gpu].on) return nvml::kSuccess;
  Slot& slot = s.slots[gpu];
  if (std::chrono::duration<double>(Clock::now() - slot.prev_at).count() < kGpmMinSpanS) return nvml::kSuccess;
  std::optional<double> values[4];
  if (nvml::Return rc = s.between(slot, values); rc != nvml::kSuccess) return rc;
  sample.sm_active_fraction = values[0];
  sample.sm_occupancy_fraction = values[1];
  sample.tensor_active_fraction = values[2];
  sample.dram_active_fraction = values[3];
  return nvml::kSuccess;
}

}  // namespace interprobe::telemetry
