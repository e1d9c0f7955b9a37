#pragma once
// The CUDA driver library, opened at run time (dlopen of libcuda.so.1, or --cuda-lib /
// INTERPROBE_CUDA_LIB) with its entry points resolved through cuGetProcAddress at the CUDA 12.0
// ABI, falling back to dlsym of the plain `_v2` names. No vendor header.
#include <optional>
#include <string>

#include "probes/gpu/cuda_driver_api.hpp"

namespace interprobe::cu {

// X(member, function type, name asked of cuGetProcAddress, name of the CUDA 12.0 ABI symbol)
#define INTERPROBE_CUDA_DRIVER_ENTRY_POINTS(X)                                            \
  X(get_error_string, GetErrorStringFn, "cuGetErrorString", "cuGetErrorString")           \
  X(get_error_name, GetErrorNameFn, "cuGetErrorName", "cuGetErrorName")                   \
  X(init, InitFn, "cuInit", "cuInit")                                                     \
  X(device_get_count, DeviceGetCountFn, "cuDeviceGetCount", "cuDeviceGetCount")           \
  X(device_get, DeviceGetFn, "cuDeviceGet", "cuDeviceGet")                                \
  X(device_get_name, DeviceGetNameFn, "cuDeviceGetName", "cuDeviceGetName")               \
  X(device_get_attribute, DeviceGetAttributeFn, "cuDeviceGetAttribute", "cuDeviceGetAttribute") \
  X(device_total_mem, DeviceTotalMemFn, "cuDeviceTotalMem", "cuDeviceTotalMem_v2")        \
  X(device_get_pci_bus_id, DeviceGetPciBusIdFn, "cuDeviceGetPCIBusId", "cuDeviceGetPCIBusId") \
  X(device_can_access_peer, DeviceCanAccessPeerFn, "cuDeviceCanAccessPeer", "cuDeviceCanAccessPeer") \
  X(primary_ctx_retain, DevicePrimaryCtxRetainFn, "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain") \
  X(primary_ctx_release, DevicePrimaryCtxReleaseFn, "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2") \
  X(ctx_set_current, CtxSetCurrentFn, "cuCtxSetCurrent", "cuCtxSetCurrent")               \
  X(ctx_get_current, CtxGetCurrentFn, "cuCtxGetCurrent", "cuCtxGetCurrent")               \
  X(ctx_synchronize, CtxSynchronizeFn, "cuCtxSynchronize", "cuCtxSynchronize")            \
  X(ctx_enable_peer_access, CtxEnablePeerAccessFn, "cuCtxEnablePeerAccess", "cuCtxEnablePeerAccess") \
  X(ctx_disable_peer_access, CtxDisablePeerAccessFn, "cuCtxDisablePeerAccess", "cuCtxDisablePeerAccess") \
  X(mem_get_info, MemGetInfoFn, "cuMemGetInfo", "cuMemGetInfo_v2")                        \
  X(mem_alloc, MemAllocFn, "cuMemAlloc", "cuMemAlloc_v2")                                 \
  X(mem_free, MemFreeFn, "cuMemFree", "cuMemFree_v2")                                     \
  X(mem_host_alloc, MemHostAllocFn, "cuMemHostAlloc", "cuMemHostAlloc")                   \
  X(mem_free_host, MemFreeHostFn, "cuMemFreeHost", "cuMemFreeHost")                       \
  X(mem_host_register, MemHostRegisterFn, "cuMemHostRegister", "cuMemHostRegister_v2")    \
  X(mem_host_unregister, MemHostUnregisterFn, "cuMemHostUnregister", "cuMemHostUnregister") \
  X(mem_host_get_device_pointer, MemHostGetDevicePointerFn, "cuMemHostGetDevicePointer", "cuMemHostGetDevicePointer_v2") \
  X(memcpy_htod_async, MemcpyHtoDAsyncFn, "cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2")    \
  X(memcpy_dtoh_async, MemcpyDtoHAsyncFn, "cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2")    \
  X(memcpy_dtod_async, MemcpyDtoDAsyncFn, "cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync_v2")    \
  X(memcpy_peer_async, MemcpyPeerAsyncFn, "cuMemcpyPeerAsync", "cuMemcpyPeerAsync")       \
  X(memcpy_dtoh, MemcpyDtoHFn, "cuMemcpyDtoH", "cuMemcpyDtoH_v2")                         \
  X(memcpy_htod, MemcpyHtoDFn, "cuMemcpyHtoD", "cuMemcpyHtoD_v2")                         \
  X(memset_d8, MemsetD8Fn, "cuMemsetD8", "cuMemsetD8_v2")                                 \
  X(stream_create, StreamCreateFn, "cuStreamCreate", "cuStreamCreate")                    \
  X(stream_destroy, StreamDestroyFn, "cuStreamDestroy", "cuStreamDestroy_v2")             \
  X(stream_synchronize, StreamSynchronizeFn, "cuStreamSynchronize", "cuStreamSynchronize") \
  X(stream_query, StreamQueryFn, "cuStreamQuery", "cuStreamQuery")                         \
  X(stream_wait_event, StreamWaitEventFn, "cuStreamWaitEvent", "cuStreamWaitEvent")       \
  X(event_create, EventCreateFn, "cuEventCreate", "cuEventCreate")                        \
  X(event_destroy, EventDestroyFn, "cuEventDestroy", "cuEventDestroy_v2")                 \
  X(event_record, EventRecordFn, "cuEventRecord", "cuEventRecord")                        \
  X(event_query, EventQueryFn, "cuEventQuery", "cuEventQuery")                            \
  X(event_synchronize, EventSynchronizeFn, "cuEventSynchronize", "cuEventSynchronize")    \
  X(event_elapsed_time, EventElapsedTimeFn, "cuEventElapsedTime", "cuEventElapsedTime")   \
  X(module_load_data, ModuleLoadDataFn, "cuModuleLoadData", "cuModuleLoadData")           \
  X(module_unload, ModuleUnloadFn, "cuModuleUnload", "cuModuleUnload")                    \
  X(module_get_function, ModuleGetFunctionFn, "cuModuleGetFunction", "cuModuleGetFunction") \
  X(launch_kernel, LaunchKernelFn, "cuLaunchKernel", "cuLaunchKernel")

// Entry points a driver may lack without interprobe refusing it (null then; the measurement that
// needs one says it was not measured).
#define INTERPROBE_CUDA_DRIVER_OPTIONAL_ENTRY_POINTS(X)                                   \
  X(stream_begin_capture, StreamBeginCaptureFn, "cuStreamBeginCapture", "cuStreamBeginCapture_v2") \
  X(stream_end_capture, StreamEndCaptureFn, "cuStreamEndCapture", "cuStreamEndCapture")   \
  X(graph_instantiate, GraphInstantiateWithFlagsFn, "cuGraphInstantiateWithFlags", "cuGraphInstantiateWithFlags") \
  X(graph_launch, GraphLaunchFn, "cuGraphLaunch", "cuGraphLaunch")                        \
  X(graph_exec_destroy, GraphExecDestroyFn, "cuGraphExecDestroy", "cuGraphExecDestroy")   \
  X(graph_destroy, GraphDestroyFn, "cuGraphDestroy", "cuGraphDestroy")

struct Driver {
#define INTERPROBE_CUDA_MEMBER(member, type, name, abi_name) type* member = nullptr;
  INTERPROBE_CUDA_DRIVER_ENTRY_POINTS(INTERPROBE_CUDA_MEMBER)
  INTERPROBE_CUDA_DRIVER_OPTIONAL_ENTRY_POINTS(INTERPROBE_CUDA_MEMBER)
#undef INTERPROBE_CUDA_MEMBER
  // Every graph entry point resolved: stream capture into a CUDA graph works.
  bool has_graphs() const {
    return stream_begin_capture && stream_end_capture && graph_instantiate && graph_launch && graph_exec_destroy &&
           graph_destroy;
  }
  DriverGetVersionFn* driver_get_version = nullptr;
  int version = 0;           // cuDriverGetVersion: 12040 = CUDA 12.4
  std::string path;          // the file loaded
  std::string resolved_by;   // "cuGetProcAddress_v2", "cuGetProcAddress" or "dlsym"
  std::optional<std::string> simulated;  // the test simulator's version when it is what was loaded

  // "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"
  std::string describe(Result rc) const;
};

// Loads the driver once per process and keeps it (the driver is never unloaded: its threads and
// the contexts outlive any one probe). Throws UnsupportedError naming the reason: no library,
// entry points missing, a driver older than CUDA 12.0, cuInit failing (no device, driver/kernel
// module mismatch). A failure is remembered too, with its reason.
const Driver& driver();

// Loads `path` without caching (tests): same checks as driver().
Driver load_driver(const std::string& path);

// Throws VendorError(call, rc, description) when rc is not success.
void check(Result rc, const char* call);

// Kernel `name` of the PTX module `ptx` on `device`. Modules are per context: one per (module,
// device), loaded on first use and kept (the driver caches the JIT result on disk, so a later run
// loads it at once). `what` names the module in errors ("the copy engine's PTX kernels").
Function module_function(const char* ptx, int device, const char* name, const char* what);

// 12040 -> "12.4"
std::string cuda_version_text(int version);

// The minimum, in the words the messages use: "CUDA 12.0 (driver r525)".
std::string minimum_driver_text();

}  // namespace interprobe::cu
