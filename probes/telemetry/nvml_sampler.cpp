// NVML telemetry reads (docs/reference.md §11), dlopen'd. Static limits once per GPU, then per tick:
// utilization, power and the energy counter, SM/memory clocks, clocks-event reasons and the
// field values for violation time and PCIe/NVLink bytes; GPM activity where the GPU gives it (gpm.cpp). A call NVML refuses leaves that field
// null and names the field in the GPU's `unsupported` list once.
#include "probes/telemetry/nvml_sampler.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "common/dynlib.hpp"
#include "common/errors.hpp"
#include "probes/telemetry/gpm.hpp"
#include "probes/topology/nvml_api.hpp"

namespace interprobe::telemetry {

namespace {

struct Utilization {  // nvmlUtilization_t
  unsigned gpu, memory;
};

// nvmlFieldValue_t: 40 bytes (docs/reference.md §11).
struct FieldValue {
  unsigned fieldId;
  unsigned scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;  // nvmlValueType_t: 0 double, 1 uint, 2 ulong, 3 ulonglong, 4 slonglong, 5 sint
  nvml::Return nvmlReturn;
  union {
    double d;
    unsigned ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
  } value;
};
static_assert(sizeof(FieldValue) == 40);

constexpr unsigned kFieldPowerViolationNs = 74, kFieldThermalViolationNs = 75, kFieldPcieTxBytes = 197,
                   kFieldPcieRxBytes = 198, kFieldNvlinkTxKib = 138, kFieldNvlinkRxKib = 139;
constexpr unsigned kFieldNvlinkSpeedMbps = 90, kFieldNvlinkCount = 91;  // per link and direction; active links
constexpr unsigned kScopeAllLinks = 0xFFFFFFFFu;
constexpr int kClockSm = 1, kClockMemory = 2;

struct Api {
  nvml::InitV2Fn* init;
  nvml::ShutdownFn* shutdown;
  nvml::ErrorStringFn* error_string;
  nvml::DeviceGetCountV2Fn* count;
  nvml::DeviceGetHandleByIndexV2Fn* handle;
  nvml::DeviceGetPciInfoV3Fn* pci;
  nvml::DeviceGetNameFn* name;
  nvml::Return (*utilization)(nvml::Device, Utilization*);
  nvml::Return (*power)(nvml::Device, unsigned*);
  nvml::Return (*energy)(nvml::Device, unsigned long long*);
  nvml::Return (*power_limit)(nvml::Device, unsigned*);
  nvml::Return (*clock)(nvml::Device, int, unsigned*);
  nvml::Return (*max_clock)(nvml::Device, int, unsigned*);
  nvml::Return (*reasons)(nvml::Device, unsigned long long*);
  nvml::Return (*fields)(nvml::Device, int, FieldValue*);
  nvml::Return (*max_pcie_gen)(nvml::Device, unsigned*);
  nvml::Return (*max_pcie_width)(nvml::Device, unsigned*);
  nvml::Return (*nvlink_state)(nvml::Device, unsigned, int*);

  explicit Api(const DynamicLibrary& dl) {
    auto get = [&dl](auto& fn, const char* symbol) { fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dl.raw_symbol(symbol)); };
    get(init, "nvmlInit_v2"), get(shutdown, "nvmlShutdown"), get(error_string, "nvmlErrorString");
    get(count, "nvmlDeviceGetCount_v2"), get(handle, "nvmlDeviceGetHandleByIndex_v2"), get(pci, "nvmlDeviceGetPciInfo_v3");
    get(name, "nvmlDeviceGetName"), get(utilization, "nvmlDeviceGetUtilizationRates"), get(power, "nvmlDeviceGetPowerUsage");
    get(energy, "nvmlDeviceGetTotalEnergyConsumption"), get(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    get(clock, "nvmlDeviceGetClockInfo"), get(max_clock, "nvmlDeviceGetMaxClockInfo");
    get(reasons, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!reasons) get(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");  // drivers before r535
    get(fields, "nvmlDeviceGetFieldValues");
    get(max_pcie_gen, "nvmlDeviceGetMaxPcieLinkGeneration"), get(max_pcie_width, "nvmlDeviceGetMaxPcieLinkWidth");
    get(nvlink_state, "nvmlDeviceGetNvLinkState");
  }
};

long long value_of(const FieldValue& f) {
  return f.valueType == 0   ? static_cast<long long>(f.value.d)
         : f.valueType == 1 ? f.value.ui
         : f.valueType == 4 ? f.value.sll
         : f.valueType == 5 ? f.value.si
                            : static_cast<long long>(f.value.ull);
}

// Per direction, after line encoding (docs/reference.md §5): GT/s x encoding x lanes / 8.
std::optional<double> pcie_capacity_gbps(unsigned gen, unsigned width) {
  static constexpr double kGts[] = {0, 2.5, 5, 8, 16, 32, 64};
  if (gen < 1 || gen > 6 || width < 1 || width > 32) return std::nullopt;
  double encoding = gen <= 2 ? 8.0 / 10 : gen <= 5 ? 128.0 / 130 : 242.0 / 256;
  return kGts[gen] * encoding * width / 8;
}

struct GpuHandle {
  nvml::Device device = nullptr;
  std::size_t slot = 0;  // in the GPM reader
  TraceGpu info;
  std::set<std::string> refused;  // fields already listed as unsupported
};

}  // namespace

struct NvmlSampler::State {
  std::unique_ptr<DynamicLibrary> dl;
  std::unique_ptr<Api> api;
  std::unique_ptr<GpmReader> gpm;  // destroyed before nvmlShutdown
  std::optional<std::string> simulated;
  double interval_s = 0.1;
  std::vector<GpuHandle> gpus;
  Trace trace;
  mutable std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::thread thread;
  std::chrono::steady_clock::time_point start;

  void refuse(GpuHandle& g, const std::string& field, nvml::Return rc) {
    if (!g.refused.insert(field).second) return;
    g.info.unsupported.push_back(fmt::format("{}: {} (code {})", field, api->error_string ? api->error_string(rc) : "error", rc));
  }
  void read_limits(GpuHandle& g);
  void read_nvlink_capacity(GpuHandle& g);
  void read_fields(GpuHandle& g, TraceSample& s);
  TraceSample read(GpuHandle& g, double t_s);
  void loop();
};

void NvmlSampler::State::read_limits(GpuHandle& g) {
  unsigned v = 0, w = 0;
  nvml::Return rc = api->power_limit ? api->power_limit(g.device, &v) : nvml::kErrorNotSupported;
  if (rc == nvml::kSuccess) g.info.power_limit_w = v / 1000.0;
  else refuse(g, "power_limit_w", rc);
  if (api->max_clock && api->max_clock(g.device, kClockSm, &v) == nvml::kSuccess) g.info.sm_clock_max_mhz = v;
  if (api->max_clock && api->max_clock(g.device, kClockMemory, &v) == nvml::kSuccess) g.info.memory_clock_max_mhz = v;
  if (api->max_pcie_gen && api->max_pcie_width && api->max_pcie_gen(g.device, &v) == nvml::kSuccess &&
      api->max_pcie_width(g.device, &w) == nvml::kSuccess)
    g.info.pcie_capacity_gbps = pcie_capacity_gbps(v, w);
  read_nvlink_capacity(g);
}

// The NVLink rate fraction's denominator: the common link speed (NVML field 90) times the links
// that are up, per direction. Field 91 (NVML_FI_DEV_NVLINK_LINK_COUNT) counts the links present,
// down ones too: each of those is asked nvmlDeviceGetNvLinkState (active = NVML_FEATURE_ENABLED).
// Null with the reason where NVML gives neither (no NVLink).
void NvmlSampler::State::read_nvlink_capacity(GpuHandle& g) {
  FieldValue values[2] = {};
  values[0].fieldId = kFieldNvlinkSpeedMbps;
  values[1].fieldId = kFieldNvlinkCount;
  nvml::Return rc = api->fields ? api->fields(g.device, 2, values) : nvml::kErrorNotSupported;
  if (rc == nvml::kSuccess) rc = values[0].nvmlReturn != nvml::kSuccess ? values[0].nvmlReturn : values[1].nvmlReturn;
  if (rc != nvml::kSuccess) return refuse(g, "nvlink_capacity_gbps", rc);
  long long mbps = value_of(values[0]), links = value_of(values[1]);
  if (api->nvlink_state && links > 0 && links <= static_cast<long long>(nvml::kNvLinkMaxLinks)) {
    long long active = 0;
    for (unsigned l = 0; l < static_cast<unsigned>(links); ++l) {
      int enabled = 0;
      if (api->nvlink_state(g.device, l, &enabled) == nvml::kSuccess && enabled == 1) ++active;
    }
    links = active;
  }
  if (mbps > 0 && links > 0 && links <= static_cast<long long>(nvml::kNvLinkMaxLinks))
    g.info.nvlink_capacity_gbps = static_cast<double>(mbps) * static_cast<double>(links) / 1000;
}

void NvmlSampler::State::read_fields(GpuHandle& g, TraceSample& s) {
  FieldValue values[6] = {};
  const unsigned ids[6] = {kFieldPowerViolationNs, kFieldThermalViolationNs, kFieldPcieTxBytes, kFieldPcieRxBytes, kFieldNvlinkTxKib, kFieldNvlinkRxKib};
  const char* names[6] = {"power_cap_violation_ns", "thermal_violation_ns", "pcie_tx_bytes", "pcie_rx_bytes", "nvlink_tx_bytes", "nvlink_rx_bytes"};
  for (int i = 0; i < 6; ++i) {
    values[i].fieldId = ids[i];
    values[i].scopeId = i >= 4 ? kScopeAllLinks : 0;
  }
  if (!api->fields) return refuse(g, "field values", nvml::kErrorNotSupported);
  if (nvml::Return rc = api->fields(g.device, 6, values); rc != nvml::kSuccess) return refuse(g, "field values", rc);
  for (int i = 0; i < 6; ++i) {
    const auto& f = values[i];
    if (f.nvmlReturn != nvml::kSuccess) {
      refuse(g, names[i], f.nvmlReturn);
      continue;
    }
    long long v = value_of(f);
    if (i >= 4) v *= 1024;  // NVLink throughput fields count KiB
    std::optional<std::int64_t>* out[6] = {&s.power_cap_violation_ns, &s.thermal_violation_ns, &s.pcie_tx_bytes,
                                           &s.pcie_rx_bytes, &s.nvlink_tx_bytes, &s.nvlink_rx_bytes};
    *out[i] = v;
  }
}

TraceSample NvmlSampler::State::read(GpuHandle& g, double t_s) {
  TraceSample s;
  s.t_s = t_s;
  s.gpu = g.info.index;
  Utilization u{};
  if (nvml::Return rc = api->utilization ? api->utilization(g.device, &u) : nvml::kErrorNotSupported; rc == nvml::kSuccess)
    s.utilization_fraction = std::min(100u, u.gpu) / 100.0;
  else refuse(g, "utilization_fraction", rc);
  unsigned mw = 0, mhz = 0;
  if (api->power && api->power(g.device, &mw) == nvml::kSuccess) s.power_w = mw / 1000.0;
  unsigned long long mj = 0, bits = 0;
  if (api->energy && api->energy(g.device, &mj) == nvml::kSuccess) s.energy_mj = static_cast<double>(mj);
  if (api->clock && api->clock(g.device, kClockSm, &mhz) == nvml::kSuccess) s.sm_clock_mhz = mhz;
  if (api->clock && api->clock(g.device, kClockMemory, &mhz) == nvml::kSuccess) s.memory_clock_mhz = mhz;
  if (nvml::Return rc = api->reasons ? api->reasons(g.device, &bits) : nvml::kErrorNotSupported; rc == nvml::kSuccess)
    s.clock_event_reasons = static_cast<std::int64_t>(bits & 0xFFFFFFFFull);
  else refuse(g, "clock_event_reasons", rc);
  read_fields(g, s);
  if (nvml::Return rc = gpm->read(g.slot, s); rc != nvml::kSuccess) refuse(g, "gpm", rc);
  return s;
}

void NvmlSampler::State::loop() {
  auto next = start;
  std::unique_lock lock(mutex);
  for (;;) {
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (auto& g : gpus) trace.samples.push_back(read(g, t));
    if (stopping) return;
    next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(interval_s));
    wake.wait_until(lock, next, [this] { return stopping; });
  }
}

NvmlSampler::NvmlSampler(double interval_s) : state_(std::make_unique<State>()) {
  auto& s = *state_;
  s.interval_s = interval_s;
  std::string error;
  s.dl = DynamicLibrary::open(VendorLibrary::nvml, &error);
  if (!s.dl) throw UnsupportedError("telemetry needs NVML (libnvidia-ml.so.1, the NVIDIA driver): " + error);
  s.api = std::make_unique<Api>(*s.dl);
  if (auto marker = s.dl->symbol<const char*()>("interprobe_sim_version")) s.simulated = marker();
  if (!s.api->init || !s.api->count || !s.api->handle)
    throw UnsupportedError(fmt::format("{} lacks nvmlInit_v2/nvmlDeviceGetCount_v2: not a usable NVML", s.dl->path()));
  if (nvml::Return rc = s.api->init(); rc != nvml::kSuccess)
    throw UnsupportedError(fmt::format("nvmlInit_v2 failed: {} (code {}); is the NVIDIA kernel driver loaded?",
                                       s.api->error_string ? s.api->error_string(rc) : "error", rc));
  unsigned count = 0;
  if (s.api->count(&count) != nvml::kSuccess || count == 0) {
    s.api->shutdown();
    throw UnsupportedError("NVML sees no GPU");
  }
  for (unsigned i = 0; i < count; ++i) {
    GpuHandle g;
    if (s.api->handle(i, &g.device) != nvml::kSuccess) continue;
    g.info.index = i;
    nvml::PciInfo pci{};
    if (s.api->pci && s.api->pci(g.device, &pci) == nvml::kSuccess) g.info.bdf = std::string(pci.busId, strnlen(pci.busId, sizeof pci.busId));
    char name[nvml::kDeviceNameBufferSize] = {};
    if (s.api->name && s.api->name(g.device, name, sizeof name) == nvml::kSuccess) g.info.name = std::string(name);
    s.read_limits(g);
    g.slot = s.gpus.size();
    s.gpus.push_back(std::move(g));
  }
  s.gpm = std::make_unique<GpmReader>(*s.dl, s.api->error_string);
  std::vector<nvml::Device> devices;
  for (const auto& g : s.gpus) devices.push_back(g.device);
  auto gpm_reasons = s.gpm->probe(devices);
  for (std::size_t i = 0; i < s.gpus.size(); ++i) s.gpus[i].info.gpm_reason = gpm_reasons[i];
  s.trace.source = s.simulated ? "simulated" : "nvml";
  s.trace.interval_s = interval_s;
}

NvmlSampler::~NvmlSampler() {
  if (state_->thread.joinable()) stop();
  state_->gpm.reset();
  if (state_->api && state_->api->shutdown) state_->api->shutdown();
}

void NvmlSampler::start() {
  state_->start = std::chrono::steady_clock::now();
  state_->thread = std::thread([this] { state_->loop(); });
}

Trace NvmlSampler::stop() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  if (state_->thread.joinable()) state_->thread.join();
  Trace out = state_->trace;
  for (const auto& g : state_->gpus) out.gpus.push_back(g.info);
  return out;
}

const std::optional<std::string>& NvmlSampler::simulated() const { return state_->simulated; }

std::vector<TraceGpu> NvmlSampler::gpus() const {
  std::lock_guard lock(state_->mutex);
  std::vector<TraceGpu> out;
  for (const auto& g : state_->gpus) out.push_back(g.info);
  return out;
}

std::vector<TraceSample> NvmlSampler::samples_between(double from_s, double to_s) const {
  std::lock_guard lock(state_->mutex);
  const auto& all = state_->trace.samples;  // appended in time order
  auto first = std::lower_bound(all.begin(), all.end(), from_s, [](const TraceSample& x, double t) { return x.t_s < t; });
  auto last = std::upper_bound(first, all.end(), to_s, [](double t, const TraceSample& x) { return t < x.t_s; });
  return {first, last};
}

std::chrono::steady_clock::time_point NvmlSampler::started_at() const { return state_->start; }
double NvmlSampler::interval_s() const { return state_->interval_s; }

}  // namespace interprobe::telemetry
