// A simulated libnvidia-ml.so.1 for tests (never installed): serves the devices of the same
// INTERPROBE_SIM_CONFIG description as the simulated libcuda (names, UUIDs, PCI bus ids, memory,
// P2P status from the peer-access matrix, NVLinks from the "nvml" object, virtualization mode) and
// telemetry counters (power, SM clock, utilization, temperature) that are a simple function of time,
// so a sampler sees them move. Entry points: those probes/topology/nvml_live.cpp calls, plus the
// common-ancestor and telemetry ones; GPM in sim_nvml_gpm.cpp.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim_config.hpp"
#include "sim_nvml_state.hpp"

namespace {

using interprobe::sim::SimConfig;
using Return = int;  // nvmlReturn_t
constexpr Return kSuccess = 0, kUninitialized = 1, kInvalidArgument = 2, kNotSupported = 3, kNotFound = 6,
                 kInsufficientSize = 7, kUnknown = 999;
constexpr int kP2pStatusOk = 0, kP2pStatusNotSupported = 5;
constexpr int kP2pCapsNvlink = 2;
constexpr int kNvLinkDeviceGpu = 0, kNvLinkDeviceSwitch = 2;
// nvmlGpuTopologyLevel_t
constexpr int kTopologyInternal = 0, kTopologyNode = 40, kTopologySystem = 50;

struct PciInfo {  // nvmlPciInfo_t (v3 layout)
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct Memory { unsigned long long total, free, used; };
struct Bar1Memory { unsigned long long bar1Total, bar1Free, bar1Used; };
struct Utilization { unsigned gpu, memory; };

using interprobe::sim::nvml::Device;

struct State {
  SimConfig config;
  std::vector<Device> devices;
  int init_count = 0;
  std::string error;  // a description that failed to parse: nvmlInit_v2 fails
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

std::mutex g_mutex;
State& state() {
  static State s = [] {
    State out;
    try {
      out.config = interprobe::sim::config_from_environment();
    } catch (const std::exception& e) {
      out.error = e.what();
      std::fprintf(stderr, "simulated NVML: %s\n", e.what());
    }
    out.devices.resize(out.config.devices.size());
    for (std::size_t i = 0; i < out.devices.size(); ++i) out.devices[i].index = static_cast<int>(i);
    return out;
  }();
  return s;
}

const interprobe::sim::DeviceSpec* spec(Device* d) {
  auto& s = state();
  if (!d || s.init_count == 0) return nullptr;
  auto i = static_cast<std::size_t>(d->index);
  return i < s.config.devices.size() ? &s.config.devices[i] : nullptr;
}

Return copy_text(const std::string& text, char* out, unsigned length) {
  if (!out) return kInvalidArgument;
  if (text.size() + 1 > length) return kInsufficientSize;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return kSuccess;
}

// "0000:18:00.0" -> NVML's 8-digit-domain form and the numeric fields.
PciInfo pci_of(const std::string& bus_id) {
  PciInfo p{};
  unsigned dev = 0, fn = 0;
  std::sscanf(bus_id.c_str(), "%x:%x:%x.%x", &p.domain, &p.bus, &dev, &fn);
  p.device = dev;
  p.pciDeviceId = 0x233010de;  // H100 SXM5's device id | NVIDIA's vendor id
  auto text = fmt::format("{:08x}:{:02x}:{:02x}.{:x}", p.domain, p.bus, dev, fn);
  std::snprintf(p.busId, sizeof p.busId, "%s", text.c_str());
  std::snprintf(p.busIdLegacy, sizeof p.busIdLegacy, "%s", text.substr(4).c_str());
  return p;
}

double elapsed_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - state().start).count(); }

// Utilization in percent at `t` seconds: a triangle wave 0..100 over utilization_period_s, the
// same for all GPUs, or the description's constant busy_percent.
double utilization_percent_at(double t) {
  const auto& n = state().config.nvml;
  if (n.busy_percent >= 0) return n.busy_percent;
  double phase = std::fmod(t, n.utilization_period_s) / n.utilization_period_s;
  return 100 * (phase < 0.5 ? 2 * phase : 2 - 2 * phase);
}

double utilization_percent() { return utilization_percent_at(elapsed_s()); }

// The integral of utilization_percent_at()/100 from 0 to t, in seconds: the energy counter
// integrates the same power curve that nvmlDeviceGetPowerUsage samples.
double busy_seconds_at(double t) {
  const auto& n = state().config.nvml;
  if (n.busy_percent >= 0) return t * n.busy_percent / 100;
  double period = n.utilization_period_s;
  double x = std::fmod(t, period) / period;
  double partial = x < 0.5 ? x * x : 2 * x - x * x - 0.5;
  return std::floor(t / period) * period / 2 + partial * period;
}

double busy_seconds() { return busy_seconds_at(elapsed_s()); }

// The peer that link `link` of device `a` reaches when NVLinks go straight to GPUs.
int link_peer(int a, unsigned link) {
  int n = static_cast<int>(state().devices.size());
  if (n < 2) return -1;
  return (a + 1 + static_cast<int>(link) % (n - 1)) % n;
}

bool has_link(unsigned link) { return static_cast<int>(link) < state().config.nvml.nvlinks_per_gpu; }

}  // namespace

namespace interprobe::sim::nvml {
const DeviceSpec* device_spec(Device* d) { return spec(d); }
const NvmlSpec& nvml_spec() { return state().config.nvml; }
double now_s() { return elapsed_s(); }
double busy_seconds_now() { return busy_seconds(); }
}  // namespace interprobe::sim::nvml

#define SIM_API extern "C" __attribute__((visibility("default")))
using NvmlDevice = Device*;

SIM_API const char* interprobe_sim_version() { return "interprobe-sim 1"; }

SIM_API Return nvmlInit_v2() {
  std::lock_guard lock(g_mutex);
  auto& s = state();
  if (!s.error.empty()) return kUnknown;
  ++s.init_count;
  return kSuccess;
}
SIM_API Return nvmlInit() { return nvmlInit_v2(); }
SIM_API Return nvmlShutdown() {
  std::lock_guard lock(g_mutex);
  auto& s = state();
  if (s.init_count == 0) return kUninitialized;
  --s.init_count;
  return kSuccess;
}

SIM_API const char* nvmlErrorString(Return rc) {
  switch (rc) {
    case kSuccess: return "Success";
    case kUninitialized: return "Uninitialized";
    case kInvalidArgument: return "Invalid Argument";
    case kNotSupported: return "Not Supported";
    case kNotFound: return "Not Found";
    case kInsufficientSize: return "Insufficient Size";
    default: return "Unknown Error (simulated NVML: bad INTERPROBE_SIM_CONFIG description)";
  }
}

SIM_API Return nvmlSystemGetDriverVersion(char* out, unsigned length) { return copy_text(state().config.nvml.driver_version, out, length); }
SIM_API Return nvmlSystemGetNvmlVersion(char* out, unsigned length) {
  return copy_text("12." + state().config.nvml.driver_version, out, length);
}
SIM_API Return nvmlSystemGetCudaDriverVersion_v2(int* version) {
  if (!version) return kInvalidArgument;
  *version = state().config.driver_version;
  return kSuccess;
}

SIM_API Return nvmlDeviceGetCount_v2(unsigned* count) {
  if (state().init_count == 0) return kUninitialized;
  if (!count) return kInvalidArgument;
  *count = static_cast<unsigned>(state().devices.size());
  return kSuccess;
}

SIM_API Return nvmlDeviceGetHandleByIndex_v2(unsigned index, NvmlDevice* device) {
  auto& s = state();
  if (s.init_count == 0) return kUninitialized;
  if (!device || index >= s.devices.size()) return kInvalidArgument;
  *device = &s.devices[index];
  return kSuccess;
}

SIM_API Return nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, NvmlDevice* device) {
  auto& s = state();
  if (s.init_count == 0) return kUninitialized;
  if (!bus_id || !device) return kInvalidArgument;
  for (auto& d : s.devices) {
    auto want = pci_of(bus_id);
    auto have = pci_of(s.config.devices[static_cast<std::size_t>(d.index)].pci_bus_id);
    if (std::strcmp(want.busId, have.busId) == 0) {
      *device = &d;
      return kSuccess;
    }
  }
  return kNotFound;
}

SIM_API Return nvmlDeviceGetPciInfo_v3(NvmlDevice device, PciInfo* pci) {
  auto* d = spec(device);
  if (!d || !pci) return kInvalidArgument;
  *pci = pci_of(d->pci_bus_id);
  return kSuccess;
}

SIM_API Return nvmlDeviceGetName(NvmlDevice device, char* out, unsigned length) {
  auto* d = spec(device);
  return d ? copy_text(d->name, out, length) : kInvalidArgument;
}

SIM_API Return nvmlDeviceGetUUID(NvmlDevice device, char* out, unsigned length) {
  if (!spec(device)) return kInvalidArgument;
  return copy_text(fmt::format("GPU-5151a000-0000-4000-8000-{:012x}", device->index), out, length);
}

SIM_API Return nvmlDeviceGetMemoryInfo(NvmlDevice device, Memory* memory) {
  auto* d = spec(device);
  if (!d || !memory) return kInvalidArgument;
  memory->total = d->memory_bytes;
  memory->used = std::uint64_t{512} << 20;
  memory->free = memory->total - memory->used;
  return kSuccess;
}

SIM_API Return nvmlDeviceGetBAR1MemoryInfo(NvmlDevice device, Bar1Memory* bar1) {
  if (!spec(device) || !bar1) return kInvalidArgument;
  bar1->bar1Total = state().config.nvml.bar1_bytes;
  bar1->bar1Used = std::uint64_t{2} << 20;
  bar1->bar1Free = bar1->bar1Total - bar1->bar1Used;
  return kSuccess;
}

SIM_API Return nvmlDeviceGetVirtualizationMode(NvmlDevice device, int* mode) {
  if (!spec(device) || !mode) return kInvalidArgument;
  *mode = state().config.nvml.virtualization_mode;
  return kSuccess;
}

SIM_API Return nvmlDeviceGetNvLinkState(NvmlDevice device, unsigned link, int* active) {
  if (!spec(device) || !active) return kInvalidArgument;
  if (!has_link(link)) return kNotSupported;
  // Field 91 counts links present; a link that is down is present and NVML_FEATURE_DISABLED here.
  const auto& n = state().config.nvml;
  *active = static_cast<int>(link) < n.nvlinks_per_gpu - n.nvlinks_down ? 1 : 0;
  return kSuccess;
}

SIM_API Return nvmlDeviceGetCudaComputeCapability(NvmlDevice device, int* major, int* minor) {
  const auto* d = spec(device);
  if (!d || !major || !minor) return kInvalidArgument;
  *major = d->cc_major;
  *minor = d->cc_minor;
  return kSuccess;
}

SIM_API Return nvmlDeviceGetNvLinkVersion(NvmlDevice device, unsigned link, unsigned* version) {
  if (!spec(device) || !version) return kInvalidArgument;
  if (!has_link(link)) return kNotSupported;
  *version = state().config.nvml.nvlink_version;
  return kSuccess;
}

SIM_API Return nvmlDeviceGetNvLinkRemotePciInfo_v2(NvmlDevice device, unsigned link, PciInfo* pci) {
  if (!spec(device) || !pci) return kInvalidArgument;
  if (!has_link(link)) return kNotSupported;
  const auto& s = state();
  if (s.config.nvml.nvlink_remote == "nvswitch") {
    // Four NVSwitches as on an HGX board: link l reaches switch l % 4.
    *pci = pci_of(fmt::format("0000:{:02x}:00.0", 0xf0 + link % 4));
    return kSuccess;
  }
  int peer = link_peer(device->index, link);
  if (peer < 0) return kNotSupported;
  *pci = pci_of(s.config.devices[static_cast<std::size_t>(peer)].pci_bus_id);
  return kSuccess;
}

SIM_API Return nvmlDeviceGetNvLinkRemoteDeviceType(NvmlDevice device, unsigned link, int* type) {
  if (!spec(device) || !type) return kInvalidArgument;
  if (!has_link(link)) return kNotSupported;
  *type = state().config.nvml.nvlink_remote == "nvswitch" ? kNvLinkDeviceSwitch : kNvLinkDeviceGpu;
  return kSuccess;
}

// Read/write/atomics follow the peer-access matrix; the NVLink capability needs an NVLink path
// (every pair behind NVSwitches, or a direct link to the peer).
SIM_API Return nvmlDeviceGetP2PStatus(NvmlDevice a, NvmlDevice b, int caps_index, int* status) {
  if (!spec(a) || !spec(b) || !status) return kInvalidArgument;
  const auto& s = state();
  if (caps_index == kP2pCapsNvlink) {
    bool linked = false;
    for (unsigned l = 0; has_link(l) && !linked; ++l)
      linked = s.config.nvml.nvlink_remote == "nvswitch" || link_peer(a->index, l) == b->index;
    *status = linked && a != b ? kP2pStatusOk : kP2pStatusNotSupported;
    return kSuccess;
  }
  bool peer = s.config.peer_access[static_cast<std::size_t>(a->index)][static_cast<std::size_t>(b->index)];
  *status = peer ? kP2pStatusOk : s.config.nvml.p2p_off_status;
  return kSuccess;
}

// Same device: internal; buses on the same half of the bus range: one NUMA node (two sockets
// split the buses at 0x80 on the described servers); otherwise across the inter-socket link.
SIM_API Return nvmlDeviceGetTopologyCommonAncestor(NvmlDevice a, NvmlDevice b, int* level) {
  auto* da = spec(a);
  auto* db = spec(b);
  if (!da || !db || !level) return kInvalidArgument;
  if (a == b) {
    *level = kTopologyInternal;
    return kSuccess;
  }
  *level = (pci_of(da->pci_bus_id).bus < 0x80) == (pci_of(db->pci_bus_id).bus < 0x80) ? kTopologyNode : kTopologySystem;
  return kSuccess;
}

// --- telemetry: what a sampler reads ---
SIM_API Return nvmlDeviceGetUtilizationRates(NvmlDevice device, Utilization* out) {
  if (!spec(device) || !out) return kInvalidArgument;
  out->gpu = static_cast<unsigned>(std::lround(utilization_percent()));
  out->memory = out->gpu / 2;
  return kSuccess;
}

SIM_API Return nvmlDeviceGetPowerUsage(NvmlDevice device, unsigned* milliwatts) {
  if (!spec(device) || !milliwatts) return kInvalidArgument;
  const auto& n = state().config.nvml;
  double watts = n.idle_power_w + (n.max_power_w - n.idle_power_w) * utilization_percent() / 100;
  *milliwatts = static_cast<unsigned>(std::lround(watts * 1000));
  return kSuccess;
}

// nvmlClockType_t: 0 graphics, 1 SM, 2 memory, 3 video. Graphics and SM run at sm_clock_mhz.
SIM_API Return nvmlDeviceGetClockInfo(NvmlDevice device, int type, unsigned* mhz) {
  if (!spec(device) || !mhz) return kInvalidArgument;
  if (type < 0 || type > 3) return kInvalidArgument;
  *mhz = type == 2 ? 2619 : type == 3 ? 1755 : state().config.nvml.sm_clock_mhz;
  return kSuccess;
}

// nvmlTemperatureSensors_t 0 = GPU: 35 C idle, 75 C at full utilization.
SIM_API Return nvmlDeviceGetTemperature(NvmlDevice device, int sensor, unsigned* celsius) {
  if (!spec(device) || !celsius || sensor != 0) return kInvalidArgument;
  *celsius = static_cast<unsigned>(std::lround(35 + 0.4 * utilization_percent()));
  return kSuccess;
}

// Telemetry the sampler of `interprobe observe` reads (probes/telemetry/nvml_sampler.cpp).
SIM_API Return nvmlDeviceGetEnforcedPowerLimit(NvmlDevice device, unsigned* milliwatts) {
  if (!spec(device) || !milliwatts) return kInvalidArgument;
  *milliwatts = static_cast<unsigned>(std::lround(state().config.nvml.max_power_w * 1000));
  return kSuccess;
}

SIM_API Return nvmlDeviceGetMaxClockInfo(NvmlDevice device, int type, unsigned* mhz) { return nvmlDeviceGetClockInfo(device, type, mhz); }

SIM_API Return nvmlDeviceGetTotalEnergyConsumption(NvmlDevice device, unsigned long long* millijoules) {
  if (!spec(device) || !millijoules) return kInvalidArgument;
  const auto& n = state().config.nvml;
  double joules = n.idle_power_w * elapsed_s() + (n.max_power_w - n.idle_power_w) * busy_seconds();
  *millijoules = static_cast<unsigned long long>(std::llround(joules * 1000));
  return kSuccess;
}

// nvmlClocksEventReasonGpuIdle (0x1) below 5% utilization; no cap or thermal reason ever.
SIM_API Return nvmlDeviceGetCurrentClocksEventReasons(NvmlDevice device, unsigned long long* reasons) {
  if (!spec(device) || !reasons) return kInvalidArgument;
  *reasons = utilization_percent() < 5 ? 0x1 : 0;
  return kSuccess;
}

SIM_API Return nvmlDeviceGetMaxPcieLinkGeneration(NvmlDevice device, unsigned* generation) {
  if (!spec(device) || !generation) return kInvalidArgument;
  *generation = 5;
  return kSuccess;
}

SIM_API Return nvmlDeviceGetMaxPcieLinkWidth(NvmlDevice device, unsigned* width) {
  if (!spec(device) || !width) return kInvalidArgument;
  *width = 16;
  return kSuccess;
}

namespace {
struct FieldValue {  // nvmlFieldValue_t
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  Return nvmlReturn;
  unsigned long long value;
};
static_assert(sizeof(FieldValue) == 40);
}  // namespace

// Fields 74/75 (violation ns): 0, never throttled; 197/198 (PCIe bytes): 1 GB/s per direction
// times the utilization's integral; NVLink fields (138/139) only with nvlinks_per_gpu > 0, the same
// rate in KiB; 90/91 the NVLink speed and count; anything else NOT_SUPPORTED per value, as NVML does.
SIM_API Return nvmlDeviceGetFieldValues(NvmlDevice device, int count, FieldValue* values) {
  if (!spec(device) || !values || count < 0) return kInvalidArgument;
  auto bytes = static_cast<unsigned long long>(1e9 * busy_seconds());
  for (int i = 0; i < count; ++i) {
    FieldValue& f = values[i];
    f.valueType = 3;  // unsigned long long
    f.nvmlReturn = kSuccess;
    f.timestamp = static_cast<long long>(elapsed_s() * 1e6);
    switch (f.fieldId) {
      case 74: case 75: f.value = 0; break;
      case 197: case 198: f.value = bytes; break;
      case 138: case 139:
        if (state().config.nvml.nvlinks_per_gpu > 0) f.value = bytes / 1024;
        else f.nvmlReturn = kNotSupported;
        break;
      case 90: case 91:  // NVLink speed per link (MB/s; 25 GB/s up to NVLink 4, 50 from 5.0 on Blackwell) and link count
        if (state().config.nvml.nvlinks_per_gpu == 0) f.nvmlReturn = kNotSupported;
        else if (f.fieldId == 91) f.valueType = 1, f.value = static_cast<unsigned>(state().config.nvml.nvlinks_per_gpu);
        else f.valueType = 1, f.value = spec(device)->cc_major >= 10 ? 50000u : 25000u;
        break;
      default: f.nvmlReturn = kNotSupported;
    }
  }
  return kSuccess;
}
