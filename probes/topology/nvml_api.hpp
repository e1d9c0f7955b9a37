#pragma once
// The NVML entry points interprobe uses, declared from NVIDIA's documented C API (nvml.h is not
// shipped with every toolkit). Only dlopen'd code uses these; no NVML header is included.
#include <cstdint>

namespace interprobe::nvml {

using Return = int;  // nvmlReturn_t
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorLibraryNotFound = 12;

struct DeviceOpaque;
using Device = DeviceOpaque*;  // nvmlDevice_t

inline constexpr unsigned kSystemNvmlVersionBufferSize = 80;
inline constexpr unsigned kSystemDriverVersionBufferSize = 80;
inline constexpr unsigned kDeviceNameBufferSize = 96;
inline constexpr unsigned kDeviceUuidBufferSize = 96;

using InitV2Fn = Return();
using ShutdownFn = Return();
using ErrorStringFn = const char*(Return);
using SystemGetNvmlVersionFn = Return(char*, unsigned);
using SystemGetDriverVersionFn = Return(char*, unsigned);
using DeviceGetCountV2Fn = Return(unsigned*);

// --- topology (issue 3) ---
inline constexpr unsigned kNvLinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS
inline constexpr unsigned kDevicePciBusIdBufferSize = 32;
inline constexpr unsigned kDevicePciBusIdBufferV2Size = 16;
inline constexpr int kFeatureEnabled = 1;  // nvmlEnableState_t

struct PciInfo {  // nvmlPciInfo_t (v2/v3 layout)
  char busIdLegacy[kDevicePciBusIdBufferV2Size];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pciDeviceId;     // device id << 16 | vendor id
  unsigned pciSubSystemId;
  char busId[kDevicePciBusIdBufferSize];  // "00000000:65:00.0"
};

struct Memory {  // nvmlMemory_t (v1)
  unsigned long long total, free, used;
};

// nvmlGpuP2PCapsIndex_t
inline constexpr int kP2pCapsRead = 0, kP2pCapsWrite = 1, kP2pCapsNvlink = 2, kP2pCapsAtomics = 3;
// nvmlIntNvLinkDeviceType_t
inline constexpr int kNvLinkDeviceGpu = 0, kNvLinkDeviceIbmNpu = 1, kNvLinkDeviceSwitch = 2, kNvLinkDeviceUnknown = 0xff;

using DeviceGetHandleByIndexV2Fn = Return(unsigned, Device*);
using DeviceGetHandleByPciBusIdV2Fn = Return(const char*, Device*);
using DeviceGetPciInfoV3Fn = Return(Device, PciInfo*);
using DeviceGetNameFn = Return(Device, char*, unsigned);
using DeviceGetUuidFn = Return(Device, char*, unsigned);
using DeviceGetMemoryInfoFn = Return(Device, Memory*);
using DeviceGetVirtualizationModeFn = Return(Device, int*);  // nvmlGpuVirtualizationMode_t
using DeviceGetNvLinkStateFn = Return(Device, unsigned, int*);  // nvmlEnableState_t
using DeviceGetNvLinkVersionFn = Return(Device, unsigned, unsigned*);  // nvmlNvlinkVersion_t
using DeviceGetCudaComputeCapabilityFn = Return(Device, int*, int*);
using DeviceGetNvLinkRemotePciInfoV2Fn = Return(Device, unsigned, PciInfo*);
using DeviceGetNvLinkRemoteDeviceTypeFn = Return(Device, unsigned, int*);  // nvmlIntNvLinkDeviceType_t
using DeviceGetP2PStatusFn = Return(Device, Device, int, int*);  // caps index -> nvmlGpuP2PStatus_t

// --- virtualization (issue 4) ---
struct Bar1Memory {  // nvmlBAR1Memory_t
  unsigned long long bar1Total, bar1Free, bar1Used;
};
using DeviceGetBar1MemoryInfoFn = Return(Device, Bar1Memory*);

// --- GPM, GPU performance monitoring on Hopper and newer (issue 19, docs/reference.md §11) ---
inline constexpr int kVirtualizationVgpu = 2;  // NVML_GPU_VIRTUALIZATION_MODE_VGPU: a fractional vGPU guest
inline constexpr unsigned kGpmSupportVersion = 1, kGpmMetricsGetVersion = 1;
// nvmlGpmMetricId_t values read by telemetry; each a percentage 0-100.
inline constexpr unsigned kGpmSmUtil = 2, kGpmSmOccupancy = 3, kGpmAnyTensorUtil = 5, kGpmDramBwUtil = 10;
// NVML_GPM_METRIC_MAX grew from 98 (r520) to 333 (CUDA 13 headers); the request reserves the
// largest so a driver built against any header reads and writes inside it.
inline constexpr unsigned kGpmMetricMax = 333;

struct GpmSampleOpaque;
using GpmSample = GpmSampleOpaque*;  // nvmlGpmSample_t

struct GpmSupport {  // nvmlGpmSupport_t
  unsigned version;
  unsigned isSupportedDevice;
};

struct GpmMetric {  // nvmlGpmMetric_t
  unsigned metricId;
  Return nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
};
static_assert(sizeof(GpmMetric) == 40);

struct GpmMetricsGet {  // nvmlGpmMetricsGet_t
  unsigned version;
  unsigned numMetrics;
  GpmSample sample1;
  GpmSample sample2;
  GpmMetric metrics[kGpmMetricMax];
};

using GpmQueryDeviceSupportFn = Return(Device, GpmSupport*);
using GpmSampleAllocFn = Return(GpmSample*);
using GpmSampleFreeFn = Return(GpmSample);
using GpmSampleGetFn = Return(Device, GpmSample);
using GpmMetricsGetFn = Return(GpmMetricsGet*);

}  // namespace interprobe::nvml
