// The simulated libcuda.so.1's entry points (CUDA 12.0 ABI names, plus cuGetProcAddress and
// cuGetProcAddress_v2 resolving the plain names to them). Tests only: never installed.
#include <dlfcn.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "probes/gpu/cuda_driver_api.hpp"
#include "sim_kernels.hpp"
#include "sim_state.hpp"

using namespace interprobe;
using namespace interprobe::sim;
namespace cu = interprobe::cu;

namespace {

State& ready() { return state(); }
bool initialized() { return state().initialized; }
Context* context_of(cu::Context c) { return reinterpret_cast<Context*>(c); }
cu::Context handle_of(Context* c) { return reinterpret_cast<cu::Context>(c); }
bool valid_device(int d) { return d >= 0 && static_cast<std::size_t>(d) < state().config.devices.size(); }

// The library's own handle, for cuGetProcAddress.
void* self() {
  static void* handle = [] {
    Dl_info info{};
    dladdr(reinterpret_cast<void*>(&ready), &info);
    return info.dli_fname ? dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  }();
  return handle;
}

// The CUDA 12.0 ABI of `name`: its _v2 variant where this library has one.
void* find_entry(const char* name) {
  if (!name || !self()) return nullptr;
  if (void* v2 = dlsym(self(), (std::string(name) + "_v2").c_str())) return v2;
  if (std::strncmp(name, "cu", 2) != 0) return nullptr;
  return dlsym(self(), name);
}

}  // namespace

#define SIM_API __attribute__((visibility("default")))

extern "C" {

__attribute__((visibility("default"))) const char* interprobe_sim_version() { return "interprobe-sim 1"; }

// Tests: replace the description (JSON text; nullptr: the default) in this process; 0 on success.
__attribute__((visibility("default"))) int interprobe_sim_load(const char* json_text) {
  try {
    reset_state(json_text ? parse_config(json_text, "interprobe_sim_load") : default_config());
    return 0;
  } catch (const std::exception&) {
    return 1;
  }
}

SIM_API cu::Result cuGetErrorName(cu::Result rc, const char** out) {
  switch (rc) {
    case cu::kSuccess: *out = "CUDA_SUCCESS"; break;
    case cu::kErrorInvalidValue: *out = "CUDA_ERROR_INVALID_VALUE"; break;
    case cu::kErrorOutOfMemory: *out = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case cu::kErrorNotInitialized: *out = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case cu::kErrorNoDevice: *out = "CUDA_ERROR_NO_DEVICE"; break;
    case cu::kErrorInvalidDevice: *out = "CUDA_ERROR_INVALID_DEVICE"; break;
    case cu::kErrorInvalidContext: *out = "CUDA_ERROR_INVALID_CONTEXT"; break;
    case cu::kErrorEccUncorrectable: *out = "CUDA_ERROR_ECC_UNCORRECTABLE"; break;
    case cu::kErrorPeerAccessUnsupported: *out = "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"; break;
    case cu::kErrorUnsupportedPtxVersion: *out = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"; break;
    case cu::kErrorInvalidPtx: *out = "CUDA_ERROR_INVALID_PTX"; break;
    case cu::kErrorInvalidHandle: *out = "CUDA_ERROR_INVALID_HANDLE"; break;
    case cu::kErrorNotFound: *out = "CUDA_ERROR_NOT_FOUND"; break;
    case cu::kErrorNotReady: *out = "CUDA_ERROR_NOT_READY"; break;
    case cu::kErrorPeerAccessAlreadyEnabled: *out = "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"; break;
    case cu::kErrorPeerAccessNotEnabled: *out = "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED"; break;
    case cu::kErrorUnknown: *out = "CUDA_ERROR_UNKNOWN"; break;
    default: *out = nullptr; return cu::kErrorInvalidValue;
  }
  return cu::kSuccess;
}

SIM_API cu::Result cuGetErrorString(cu::Result rc, const char** out) {
  if (rc == cu::kErrorUnknown && !state().config_error.empty()) {
    *out = state().config_error.c_str();  // a description that could not be read says why
    return cu::kSuccess;
  }
  const char* name = nullptr;
  if (cuGetErrorName(rc, &name) != cu::kSuccess) return cu::kErrorInvalidValue;
  *out = "simulated driver error";
  return cu::kSuccess;
}

SIM_API cu::Result cuGetProcAddress_v2(const char* name, void** fn, int, std::uint64_t, int* status) {
  *fn = find_entry(name);
  if (status) *status = *fn ? cu::kProcAddressSuccess : cu::kProcAddressSymbolNotFound;
  return *fn ? cu::kSuccess : cu::kErrorNotFound;
}

SIM_API cu::Result cuGetProcAddress(const char* name, void** fn, int version, std::uint64_t flags) {
  return cuGetProcAddress_v2(name, fn, version, flags, nullptr);
}

SIM_API cu::Result cuDriverGetVersion(int* version) {
  if (!version) return cu::kErrorInvalidValue;
  *version = ready().config.driver_version;
  return cu::kSuccess;
}

SIM_API cu::Result cuInit(unsigned flags) {
  State& s = ready();
  if (flags != 0) return cu::kErrorInvalidValue;
  if (!s.config_error.empty()) return cu::kErrorUnknown;
  if (s.config.devices.empty()) return cu::kErrorNoDevice;
  if (!s.initialized) {
    s.contexts.assign(s.config.devices.size(), Context{});
    for (std::size_t d = 0; d < s.contexts.size(); ++d) s.contexts[d].device = static_cast<int>(d);
    s.used_bytes.assign(s.config.devices.size(), 0);
    // Lazy loading is the default from CUDA 12.2 (r535); CUDA_MODULE_LOADING chooses either way.
    const char* loading = std::getenv("CUDA_MODULE_LOADING");
    if (loading && std::string(loading) == "EAGER") s.lazy_loading = false;
    else if (loading && std::string(loading) == "LAZY") s.lazy_loading = true;
    else s.lazy_loading = s.config.driver_version >= 12020;
    s.initialized = true;
  }
  return cu::kSuccess;
}

SIM_API cu::Result cuDeviceGetCount(int* count) {
  if (!initialized()) return cu::kErrorNotInitialized;
  *count = static_cast<int>(state().config.devices.size());
  return cu::kSuccess;
}

SIM_API cu::Result cuDeviceGet(cu::Device* device, int ordinal) {
  if (!initialized()) return cu::kErrorNotInitialized;
  if (!valid_device(ordinal)) return cu::kErrorInvalidDevice;
  *device = ordinal;
  return cu::kSuccess;
}

SIM_API cu::Result cuDeviceGetName(char* name, int length, cu::Device d) {
  if (!initialized()) return cu::kErrorNotInitialized;
  if (!valid_device(d)) return cu::kErrorInvalidDevice;
  if (!name || length <= 0) return cu::kErrorInvalidValue;
  std::snprintf(name, static_cast<std::size_t>(length), "%s", state().config.devices[static_cast<std::size_t>(d)].name.c_str());
  return cu::kSuccess;
}

SIM_API cu::Result cuDeviceGetAttribute(int* value, int attribute, cu::Device d) {
  if (!initialized()) return cu::kErrorNotInitialized;
  if (!valid_device(d)) return cu::kErrorInvalidDevice;
  const DeviceSpec& spec = state().config.devices[static_cast<std::size_t>(d)];
  switch (attribute) {
    case cu::kAttrMultiprocessorCount: *value = spec.sm_count; break;
    case cu::kAttrComputeCapabilityMajor: *value = spec.cc_major; break;
    case cu::kAttrComputeCapabilityMinor: *value = spec.cc_minor; break;
    case cu::kAttrMaxThreadsPerMultiprocessor: *value = spec.max_threads_per_sm; break;
    case cu::kAttrL2CacheSize: *value = static_cast<int>(spec.l2_bytes); break;
    default: return cu::kErrorInvalidValue;
  }
  return cu::kSuccess;
}

SIM_API cu::Result cuDeviceTotalMem_v2(std::size_t* bytes, cu::Device d) {
  if (!initialized()) return cu::kErrorNotInitialized;
  if (!valid_device(d)) return cu::kErrorInvalidDevice;
  *bytes = state().config.devices[static_cast<std::size_t>(d)].memory_bytes;
  return cu::kSuccess;
}

SIM_API cu::Result cuDeviceGetPCIBusId(char* out, int length, cu::Device d) {
  if (!initialized()) return cu::kErrorNotInitialized;
  if (!valid_device(d)) return cu::kErrorInvalidDevice;
  // The driver writes upper case hex, as "0000:1B:00.0".
  std::string id = state().config.devices[static_cast<std::size_t>(d)].pci_bus_id;
  for (char& c : id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::snprintf(out, static_cast<std::size_t>(length), "%s", id.c_str());
  return cu::kSuccess;
}

SIM_API cu::Result cuDeviceCanAccessPeer(int* can, cu::Device a, cu::Device b) {
  if (!initialized()) return cu::kErrorNotInitialized;
  if (!valid_device(a) || !valid_device(b)) return cu::kErrorInvalidDevice;
  *can = state().config.peer_access[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] ? 1 : 0;
  return cu::kSuccess;
}

SIM_API cu::Result cuDevicePrimaryCtxRetain(cu::Context* ctx, cu::Device d) {
  if (!initialized()) return cu::kErrorNotInitialized;
  if (!valid_device(d)) return cu::kErrorInvalidDevice;
  Context& c = state().contexts[static_cast<std::size_t>(d)];
  ++c.retains;
  *ctx = handle_of(&c);
  return cu::kSuccess;
}

SIM_API cu::Result cuDevicePrimaryCtxRelease_v2(cu::Device d) {
  if (!initialized()) return cu::kErrorNotInitialized;
  if (!valid_device(d)) return cu::kErrorInvalidDevice;
  Context& c = state().contexts[static_cast<std::size_t>(d)];
  if (c.retains <= 0) return cu::kErrorInvalidContext;
  --c.retains;
  return cu::kSuccess;
}

SIM_API cu::Result cuCtxSetCurrent(cu::Context ctx) {
  if (!initialized()) return cu::kErrorNotInitialized;
  current_context() = context_of(ctx);
  return cu::kSuccess;
}

SIM_API cu::Result cuCtxGetCurrent(cu::Context* ctx) {
  if (!initialized()) return cu::kErrorNotInitialized;
  *ctx = handle_of(current_context());
  return cu::kSuccess;
}

}  // extern "C"
