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

}  // namespace interprobe::nvml
