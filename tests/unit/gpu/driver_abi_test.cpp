// Our declarations of the driver API (probes/gpu/cuda_driver_api.hpp) against the real cuda.h,
// where the toolkit is installed (INTERPROBE_HAVE_CUDA_H): values and entry point signatures.
#include <gtest/gtest.h>

#include <type_traits>

#include "probes/gpu/cuda_driver_api.hpp"

namespace cu = interprobe::cu;

#if INTERPROBE_HAVE_CUDA_H
#include <cuda.h>

namespace {

// cuda.h's enums are passed as int-sized integers: compare signatures with them mapped to int.
template <class T>
struct Abi {
  using type = T;
};
template <>
struct Abi<CUresult> {
  using type = int;
};
template <>
struct Abi<CUdevice_attribute> {
  using type = int;
};
template <>
struct Abi<CUdriverProcAddressQueryResult> {
  using type = int;
};
template <>
struct Abi<CUstreamCaptureMode> {
  using type = int;
};
template <class T>
struct Abi<T*> {
  using type = typename Abi<T>::type*;
};
template <class R, class... A>
struct Abi<R(A...)> {
  using type = typename Abi<R>::type(typename Abi<A>::type...);
};
template <class F>
using abi_t = typename Abi<std::remove_pointer_t<F>>::type;

#define EXPECT_SAME_ABI(ours, theirs) static_assert(std::is_same_v<abi_t<decltype(&theirs)>, cu::ours>, #theirs)

EXPECT_SAME_ABI(GetErrorStringFn, cuGetErrorString);
EXPECT_SAME_ABI(GetErrorNameFn, cuGetErrorName);
EXPECT_SAME_ABI(InitFn, cuInit);
EXPECT_SAME_ABI(DriverGetVersionFn, cuDriverGetVersion);
EXPECT_SAME_ABI(GetProcAddressV2Fn, cuGetProcAddress_v2);
EXPECT_SAME_ABI(DeviceGetCountFn, cuDeviceGetCount);
EXPECT_SAME_ABI(DeviceGetFn, cuDeviceGet);
EXPECT_SAME_ABI(DeviceGetNameFn, cuDeviceGetName);
EXPECT_SAME_ABI(DeviceGetAttributeFn, cuDeviceGetAttribute);
EXPECT_SAME_ABI(DeviceTotalMemFn, cuDeviceTotalMem_v2);
EXPECT_SAME_ABI(DeviceGetPciBusIdFn, cuDeviceGetPCIBusId);
EXPECT_SAME_ABI(DeviceCanAccessPeerFn, cuDeviceCanAccessPeer);
EXPECT_SAME_ABI(DevicePrimaryCtxRetainFn, cuDevicePrimaryCtxRetain);
EXPECT_SAME_ABI(DevicePrimaryCtxReleaseFn, cuDevicePrimaryCtxRelease_v2);
EXPECT_SAME_ABI(CtxSetCurrentFn, cuCtxSetCurrent);
EXPECT_SAME_ABI(CtxGetCurrentFn, cuCtxGetCurrent);
EXPECT_SAME_ABI(CtxSynchronizeFn, cuCtxSynchronize);
EXPECT_SAME_ABI(CtxEnablePeerAccessFn, cuCtxEnablePeerAccess);
EXPECT_SAME_ABI(CtxDisablePeerAccessFn, cuCtxDisablePeerAccess);
EXPECT_SAME_ABI(MemGetInfoFn, cuMemGetInfo_v2);
EXPECT_SAME_ABI(MemAllocFn, cuMemAlloc_v2);
EXPECT_SAME_ABI(MemFreeFn, cuMemFree_v2);
EXPECT_SAME_ABI(MemHostAllocFn, cuMemHostAlloc);
EXPECT_SAME_ABI(MemFreeHostFn, cuMemFreeHost);
EXPECT_SAME_ABI(MemHostRegisterFn, cuMemHostRegister_v2);
EXPECT_SAME_ABI(MemHostUnregisterFn, cuMemHostUnregister);
EXPECT_SAME_ABI(MemHostGetDevicePointerFn, cuMemHostGetDevicePointer_v2);
EXPECT_SAME_ABI(MemcpyHtoDAsyncFn, cuMemcpyHtoDAsync_v2);
EXPECT_SAME_ABI(MemcpyDtoHAsyncFn, cuMemcpyDtoHAsync_v2);
EXPECT_SAME_ABI(MemcpyDtoDAsyncFn, cuMemcpyDtoDAsync_v2);
EXPECT_SAME_ABI(MemcpyPeerAsyncFn, cuMemcpyPeerAsync);
EXPECT_SAME_ABI(MemcpyDtoHFn, cuMemcpyDtoH_v2);
EXPECT_SAME_ABI(MemcpyHtoDFn, cuMemcpyHtoD_v2);
EXPECT_SAME_ABI(StreamQueryFn, cuStreamQuery);
EXPECT_SAME_ABI(MemsetD8Fn, cuMemsetD8_v2);
EXPECT_SAME_ABI(StreamCreateFn, cuStreamCreate);
EXPECT_SAME_ABI(StreamDestroyFn, cuStreamDestroy_v2);
EXPECT_SAME_ABI(StreamSynchronizeFn, cuStreamSynchronize);
EXPECT_SAME_ABI(StreamWaitEventFn, cuStreamWaitEvent);
EXPECT_SAME_ABI(EventCreateFn, cuEventCreate);
EXPECT_SAME_ABI(EventDestroyFn, cuEventDestroy_v2);
EXPECT_SAME_ABI(EventRecordFn, cuEventRecord);
EXPECT_SAME_ABI(EventQueryFn, cuEventQuery);
EXPECT_SAME_ABI(EventSynchronizeFn, cuEventSynchronize);
EXPECT_SAME_ABI(EventElapsedTimeFn, cuEventElapsedTime);
EXPECT_SAME_ABI(ModuleLoadDataFn, cuModuleLoadData);
EXPECT_SAME_ABI(ModuleUnloadFn, cuModuleUnload);
EXPECT_SAME_ABI(ModuleGetFunctionFn, cuModuleGetFunction);
EXPECT_SAME_ABI(LaunchKernelFn, cuLaunchKernel);
EXPECT_SAME_ABI(StreamBeginCaptureFn, cuStreamBeginCapture_v2);
EXPECT_SAME_ABI(StreamEndCaptureFn, cuStreamEndCapture);
EXPECT_SAME_ABI(GraphInstantiateWithFlagsFn, cuGraphInstantiateWithFlags);
EXPECT_SAME_ABI(GraphLaunchFn, cuGraphLaunch);
EXPECT_SAME_ABI(GraphExecDestroyFn, cuGraphExecDestroy);
EXPECT_SAME_ABI(GraphDestroyFn, cuGraphDestroy);
static_assert(std::is_same_v<CUgraph, cu::Graph> && std::is_same_v<CUgraphExec, cu::GraphExec>);
static_assert(cu::kStreamCaptureModeThreadLocal == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);

static_assert(std::is_same_v<CUdeviceptr, cu::DevicePtr>);
static_assert(std::is_same_v<CUcontext, cu::Context> && std::is_same_v<CUstream, cu::Stream> &&
              std::is_same_v<CUevent, cu::Event> && std::is_same_v<CUmodule, cu::Module> &&
              std::is_same_v<CUfunction, cu::Function>);
static_assert(sizeof(CUresult) == sizeof(cu::Result));
static_assert(cu::kSuccess == CUDA_SUCCESS && cu::kErrorInvalidValue == CUDA_ERROR_INVALID_VALUE &&
              cu::kErrorOutOfMemory == CUDA_ERROR_OUT_OF_MEMORY && cu::kErrorNotInitialized == CUDA_ERROR_NOT_INITIALIZED &&
              cu::kErrorNoDevice == CUDA_ERROR_NO_DEVICE && cu::kErrorInvalidDevice == CUDA_ERROR_INVALID_DEVICE &&
              cu::kErrorInvalidContext == CUDA_ERROR_INVALID_CONTEXT &&
              cu::kErrorEccUncorrectable == CUDA_ERROR_ECC_UNCORRECTABLE &&
              cu::kErrorPeerAccessUnsupported == CUDA_ERROR_PEER_ACCESS_UNSUPPORTED &&
              cu::kErrorInvalidPtx == CUDA_ERROR_INVALID_PTX &&
              cu::kErrorUnsupportedPtxVersion == CUDA_ERROR_UNSUPPORTED_PTX_VERSION &&
              cu::kErrorInvalidHandle == CUDA_ERROR_INVALID_HANDLE && cu::kErrorNotFound == CUDA_ERROR_NOT_FOUND &&
              cu::kErrorNotReady == CUDA_ERROR_NOT_READY && cu::kErrorIllegalAddress == CUDA_ERROR_ILLEGAL_ADDRESS &&
              cu::kErrorPeerAccessAlreadyEnabled == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED &&
              cu::kErrorPeerAccessNotEnabled == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED &&
              cu::kErrorNotSupported == CUDA_ERROR_NOT_SUPPORTED && cu::kErrorUnknown == CUDA_ERROR_UNKNOWN);
static_assert(cu::kAttrMultiprocessorCount == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT &&
              cu::kAttrComputeCapabilityMajor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR &&
              cu::kAttrComputeCapabilityMinor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(cu::kStreamNonBlocking == CU_STREAM_NON_BLOCKING && cu::kEventDefault == CU_EVENT_DEFAULT &&
              cu::kEventDisableTiming == CU_EVENT_DISABLE_TIMING && cu::kMemHostAllocPortable == CU_MEMHOSTALLOC_PORTABLE &&
              cu::kMemHostAllocDeviceMap == CU_MEMHOSTALLOC_DEVICEMAP &&
              cu::kMemHostRegisterPortable == CU_MEMHOSTREGISTER_PORTABLE &&
              cu::kMemHostRegisterDeviceMap == CU_MEMHOSTREGISTER_DEVICEMAP &&
              cu::kGetProcAddressLegacyStream == CU_GET_PROC_ADDRESS_LEGACY_STREAM);
static_assert(cu::kProcAddressSuccess == CU_GET_PROC_ADDRESS_SUCCESS &&
              cu::kProcAddressSymbolNotFound == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND &&
              cu::kProcAddressVersionNotSufficient == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);

}  // namespace
#endif

TEST(DriverAbi, CheckedAgainstCudaHWhereTheToolkitIsInstalled) {
#if INTERPROBE_HAVE_CUDA_H
  // The static_asserts above ran; the header we compared with is at least as new as our ABI.
  EXPECT_GE(CUDA_VERSION, cu::kAbiVersion);
#else
  GTEST_SKIP() << "no cuda.h here: the declarations are checked where the toolkit is installed";
#endif
}

TEST(DriverAbi, AsksForTheCuda12AbiAndRunsFromR525) {
  EXPECT_EQ(cu::kAbiVersion, 12000);
  EXPECT_EQ(cu::kMinimumDriverVersion, 12000);
  EXPECT_STREQ(cu::kMinimumDriverBranch, "r525");
}
