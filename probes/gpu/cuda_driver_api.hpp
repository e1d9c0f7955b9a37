#pragma once
// The part of the CUDA driver API interprobe calls, declared from its public, stable ABI so that
// nothing here needs cuda.h: the GPU paths build on any machine, with or without the toolkit.
// tests/unit/gpu/driver_abi_test.cpp checks every value and signature against the real cuda.h
// wherever the toolkit is installed. Signatures are those of the CUDA 12.0 ABI, i.e. the `_v2`
// entry points where the driver has one (cuGetProcAddress(name, 12000) returns those).
#include <cstddef>
#include <cstdint>

// The driver's opaque handle types keep their names so that a translation unit that also
// includes cuda.h sees the same types.
struct CUctx_st;
struct CUstream_st;
struct CUevent_st;
struct CUmod_st;
struct CUfunc_st;
struct CUgraph_st;
struct CUgraphExec_st;

namespace interprobe::cu {

using Result = int;  // CUresult
using Device = int;  // CUdevice
using DevicePtr = unsigned long long;  // CUdeviceptr (64-bit)
using Context = CUctx_st*;
using Stream = CUstream_st*;
using Event = CUevent_st*;
using Module = CUmod_st*;
using Function = CUfunc_st*;
using Graph = CUgraph_st*;
using GraphExec = CUgraphExec_st*;

// CUresult values we name.
inline constexpr Result kSuccess = 0;
inline constexpr Result kErrorInvalidValue = 1;
inline constexpr Result kErrorOutOfMemory = 2;
inline constexpr Result kErrorNotInitialized = 3;
inline constexpr Result kErrorNoDevice = 100;
inline constexpr Result kErrorInvalidDevice = 101;
inline constexpr Result kErrorInvalidContext = 201;
inline constexpr Result kErrorEccUncorrectable = 214;
inline constexpr Result kErrorPeerAccessUnsupported = 217;
inline constexpr Result kErrorInvalidPtx = 218;
inline constexpr Result kErrorUnsupportedPtxVersion = 222;
inline constexpr Result kErrorInvalidHandle = 400;
inline constexpr Result kErrorNotFound = 500;
inline constexpr Result kErrorNotReady = 600;
inline constexpr Result kErrorIllegalAddress = 700;
inline constexpr Result kErrorPeerAccessAlreadyEnabled = 704;
inline constexpr Result kErrorPeerAccessNotEnabled = 705;
inline constexpr Result kErrorNotSupported = 801;
inline constexpr Result kErrorUnknown = 999;

// CUdevice_attribute values we read.
inline constexpr int kAttrMultiprocessorCount = 16;
inline constexpr int kAttrL2CacheSize = 38;                  // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, bytes
inline constexpr int kAttrMaxThreadsPerMultiprocessor = 39;  // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
inline constexpr int kAttrComputeCapabilityMajor = 75;
inline constexpr int kAttrComputeCapabilityMinor = 76;

// Flags.
inline constexpr unsigned kStreamNonBlocking = 0x1;       // CU_STREAM_NON_BLOCKING
inline constexpr unsigned kEventDefault = 0x0;            // CU_EVENT_DEFAULT
inline constexpr unsigned kEventDisableTiming = 0x2;      // CU_EVENT_DISABLE_TIMING
inline constexpr unsigned kMemHostAllocPortable = 0x1;    // CU_MEMHOSTALLOC_PORTABLE
inline constexpr unsigned kMemHostAllocDeviceMap = 0x2;   // CU_MEMHOSTALLOC_DEVICEMAP
inline constexpr unsigned kMemHostRegisterPortable = 0x1; // CU_MEMHOSTREGISTER_PORTABLE
inline constexpr unsigned kMemHostRegisterDeviceMap = 0x2;// CU_MEMHOSTREGISTER_DEVICEMAP
inline constexpr int kStreamCaptureModeThreadLocal = 1;   // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
inline constexpr std::uint64_t kGetProcAddressLegacyStream = 0x1;  // CU_GET_PROC_ADDRESS_LEGACY_STREAM

// CUdriverProcAddressQueryResult (cuGetProcAddress_v2, the CUDA 12.0 ABI).
inline constexpr int kProcAddressSuccess = 0;
inline constexpr int kProcAddressSymbolNotFound = 1;
inline constexpr int kProcAddressVersionNotSufficient = 2;

// The ABI version interprobe asks cuGetProcAddress for, and the oldest driver it runs on:
// CUDA 12.0 = driver branch r525, PTX ISA 8.0.
inline constexpr int kAbiVersion = 12000;
inline constexpr int kMinimumDriverVersion = 12000;
inline constexpr const char* kMinimumDriverBranch = "r525";

// Entry points (function types; the loader holds pointers to them).
using GetErrorStringFn = Result(Result, const char**);
using GetErrorNameFn = Result(Result, const char**);
using InitFn = Result(unsigned);
using DriverGetVersionFn = Result(int*);
// cuGetProcAddress (the CUDA 11.3 ABI) and cuGetProcAddress_v2 (the CUDA 12.0 ABI, r525, what
// cuda.h 12.x calls cuGetProcAddress): the same but for the last argument (a
// CUdriverProcAddressQueryResult*).
using GetProcAddressFn = Result(const char*, void**, int, std::uint64_t);
using GetProcAddressV2Fn = Result(const char*, void**, int, std::uint64_t, int*);
using DeviceGetCountFn = Result(int*);
using DeviceGetFn = Result(Device*, int);
using DeviceGetNameFn = Result(char*, int, Device);
using DeviceGetAttributeFn = Result(int*, int, Device);
using DeviceTotalMemFn = Result(std::size_t*, Device);  // cuDeviceTotalMem_v2
using DeviceGetPciBusIdFn = Result(char*, int, Device);
using DeviceCanAccessPeerFn = Result(int*, Device, Device);
using DevicePrimaryCtxRetainFn = Result(Context*, Device);
using DevicePrimaryCtxReleaseFn = Result(Device);  // cuDevicePrimaryCtxRelease_v2
using CtxSetCurrentFn = Result(Context);
using CtxGetCurrentFn = Result(Context*);
using CtxSynchronizeFn = Result();
using CtxEnablePeerAccessFn = Result(Context, unsigned);
using CtxDisablePeerAccessFn = Result(Context);
using MemGetInfoFn = Result(std::size_t*, std::size_t*);  // cuMemGetInfo_v2
using MemAllocFn = Result(DevicePtr*, std::size_t);      // cuMemAlloc_v2
using MemFreeFn = Result(DevicePtr);                      // cuMemFree_v2
using MemHostAllocFn = Result(void**, std::size_t, unsigned);
using MemFreeHostFn = Result(void*);
using MemHostRegisterFn = Result(void*, std::size_t, unsigned);  // cuMemHostRegister_v2
using MemHostUnregisterFn = Result(void*);
using MemHostGetDevicePointerFn = Result(DevicePtr*, void*, unsigned);  // _v2
using MemcpyHtoDAsyncFn = Result(DevicePtr, const void*, std::size_t, Stream);  // _v2
using MemcpyDtoHAsyncFn = Result(void*, DevicePtr, std::size_t, Stream);        // _v2
using MemcpyDtoDAsyncFn = Result(DevicePtr, DevicePtr, std::size_t, Stream);    // _v2
using MemcpyPeerAsyncFn = Result(DevicePtr, Context, DevicePtr, Context, std::size_t, Stream);
using MemcpyDtoHFn = Result(void*, DevicePtr, std::size_t);                     // _v2
using MemcpyHtoDFn = Result(DevicePtr, const void*, std::size_t);               // _v2
using MemsetD8Fn = Result(DevicePtr, unsigned char, std::size_t);               // _v2
using StreamCreateFn = Result(Stream*, unsigned);
using StreamDestroyFn = Result(Stream);  // cuStreamDestroy_v2
using StreamSynchronizeFn = Result(Stream);
using StreamQueryFn = Result(Stream);
using StreamWaitEventFn = Result(Stream, Event, unsigned);
using EventCreateFn = Result(Event*, unsigned);
using EventDestroyFn = Result(Event);  // cuEventDestroy_v2
using EventRecordFn = Result(Event, Stream);
using EventQueryFn = Result(Event);
using EventSynchronizeFn = Result(Event);
using EventElapsedTimeFn = Result(float*, Event, Event);
using ModuleLoadDataFn = Result(Module*, const void*);
using ModuleUnloadFn = Result(Module);
using ModuleGetFunctionFn = Result(Function*, Module, const char*);
using LaunchKernelFn = Result(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, Stream,
                              void**, void**);
// CUDA graphs (optional: the launch floor measures a graph where the driver has them).
using StreamBeginCaptureFn = Result(Stream, int);  // cuStreamBeginCapture_v2
using StreamEndCaptureFn = Result(Stream, Graph*);
using GraphInstantiateWithFlagsFn = Result(GraphExec*, Graph, unsigned long long);
using GraphLaunchFn = Result(GraphExec, Stream);
using GraphExecDestroyFn = Result(GraphExec);
using GraphDestroyFn = Result(Graph);

}  // namespace interprobe::cu
