// The simulated libcuda against the preconditions cuda.h documents (issue 31): a table of entry
// point x precondition x expected error, each rule with the text it comes from. The simulator is
// what stands between interprobe's GPU code and a real driver, so it must refuse what the real one
// refuses: every call before cuInit, and a context-dependent call on a thread without a context.
#include <dlfcn.h>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "probes/bandwidth/cuda_kernels.hpp"
#include "probes/gpu/cuda_driver_api.hpp"
#include "sim_fixture.hpp"

namespace {

using namespace interprobe;
namespace cu = interprobe::cu;

// cuda.h, enum cudaError_enum.
constexpr const char* kNotInitialized =
    "cuda.h CUDA_ERROR_NOT_INITIALIZED = 3: \"This indicates that the CUDA driver has not been initialized with "
    "::cuInit() or that initialization has failed.\" (in the \\return list of every entry point but cuInit, "
    "cuDriverGetVersion, cuGetErrorName/String and cuGetProcAddress)";
constexpr const char* kInvalidContext =
    "cuda.h CUDA_ERROR_INVALID_CONTEXT = 201: \"This most frequently indicates that there is no context bound to "
    "the current thread.\" (in the \\return list of the entry point)";

// The simulated library's entry points by name, called directly (no loader, which would cuInit).
struct Sim {
  void* handle = nullptr;
  template <class F>
  F* fn(const char* name) const {
    auto* f = reinterpret_cast<F*>(dlsym(handle, name));
    EXPECT_NE(f, nullptr) << name;
    return f;
  }
};

enum class Before { cu_init, context };

struct Rule {
  const char* entry;
  Before before;
  cu::Result expected;
  std::function<cu::Result(const Sim&)> call;
};

std::vector<Rule> rules() {
  static int host_word = 0;
  static void* host = &host_word;
  const auto d0 = static_cast<cu::DevicePtr>(reinterpret_cast<std::uintptr_t>(host));
  std::vector<Rule> r;
  // Before cuInit: every entry point.
  auto before_init = [&](const char* entry, std::function<cu::Result(const Sim&)> call) {
    r.push_back({entry, Before::cu_init, cu::kErrorNotInitialized, std::move(call)});
  };
  // Initialized, no current context: the context-dependent ones.
  auto without_context = [&](const char* entry, std::function<cu::Result(const Sim&)> call) {
    r.push_back({entry, Before::context, cu::kErrorInvalidContext, call});
    before_init(entry, std::move(call));
  };
  int* count = &host_word;
  before_init("cuDeviceGetCount", [=](const Sim& s) { return s.fn<cu::DeviceGetCountFn>("cuDeviceGetCount")(count); });
  before_init("cuDeviceGet", [=](const Sim& s) { return s.fn<cu::DeviceGetFn>("cuDeviceGet")(count, 0); });
  before_init("cuDeviceGetAttribute", [=](const Sim& s) {
    return s.fn<cu::DeviceGetAttributeFn>("cuDeviceGetAttribute")(count, cu::kAttrMultiprocessorCount, 0);
  });
  before_init("cuDevicePrimaryCtxRetain", [](const Sim& s) {
    cu::Context c = nullptr;
    return s.fn<cu::DevicePrimaryCtxRetainFn>("cuDevicePrimaryCtxRetain")(&c, 0);
  });
  before_init("cuCtxSetCurrent", [](const Sim& s) { return s.fn<cu::CtxSetCurrentFn>("cuCtxSetCurrent")(nullptr); });
  before_init("cuCtxGetCurrent", [](const Sim& s) {
    cu::Context c = nullptr;
    return s.fn<cu::CtxGetCurrentFn>("cuCtxGetCurrent")(&c);
  });
  before_init("cuMemFree_v2", [=](const Sim& s) { return s.fn<cu::MemFreeFn>("cuMemFree_v2")(d0); });
  before_init("cuMemFreeHost", [](const Sim& s) { return s.fn<cu::MemFreeHostFn>("cuMemFreeHost")(host); });
  before_init("cuMemHostUnregister", [](const Sim& s) { return s.fn<cu::MemHostUnregisterFn>("cuMemHostUnregister")(host); });
  before_init("cuStreamDestroy_v2", [](const Sim& s) { return s.fn<cu::StreamDestroyFn>("cuStreamDestroy_v2")(nullptr); });
  before_init("cuEventQuery", [](const Sim& s) { return s.fn<cu::EventQueryFn>("cuEventQuery")(nullptr); });
  before_init("cuEventSynchronize", [](const Sim& s) { return s.fn<cu::EventSynchronizeFn>("cuEventSynchronize")(nullptr); });
  before_init("cuEventDestroy_v2", [](const Sim& s) { return s.fn<cu::EventDestroyFn>("cuEventDestroy_v2")(nullptr); });
  before_init("cuEventElapsedTime", [](const Sim& s) {
    float ms = 0;
    return s.fn<cu::EventElapsedTimeFn>("cuEventElapsedTime")(&ms, nullptr, nullptr);
  });
  before_init("cuModuleUnload", [](const Sim& s) { return s.fn<cu::ModuleUnloadFn>("cuModuleUnload")(nullptr); });
  before_init("cuMemcpyDtoDAsync_v2",
              [=](const Sim& s) { return s.fn<cu::MemcpyDtoDAsyncFn>("cuMemcpyDtoDAsync_v2")(d0, d0, 4, nullptr); });
  before_init("cuMemcpyPeerAsync", [=](const Sim& s) {
    return s.fn<cu::MemcpyPeerAsyncFn>("cuMemcpyPeerAsync")(d0, nullptr, d0, nullptr, 4, nullptr);
  });

  without_context("cuCtxSynchronize", [](const Sim& s) { return s.fn<cu::CtxSynchronizeFn>("cuCtxSynchronize")(); });
  without_context("cuMemGetInfo_v2", [](const Sim& s) {
    std::size_t a = 0, b = 0;
    return s.fn<cu::MemGetInfoFn>("cuMemGetInfo_v2")(&a, &b);
  });
  without_context("cuMemAlloc_v2", [](const Sim& s) {
    cu::DevicePtr p = 0;
    return s.fn<cu::MemAllocFn>("cuMemAlloc_v2")(&p, 64);
  });
  // What HoldFlag and PinnedRegistration did on a thread without a context (issue 31 point 1).
  without_context("cuMemHostAlloc", [](const Sim& s) {
    void* p = nullptr;
    return s.fn<cu::MemHostAllocFn>("cuMemHostAlloc")(&p, 64, cu::kMemHostAllocPortable | cu::kMemHostAllocDeviceMap);
  });
  without_context("cuMemHostRegister_v2", [](const Sim& s) {
    return s.fn<cu::MemHostRegisterFn>("cuMemHostRegister_v2")(host, sizeof host_word, cu::kMemHostRegisterPortable);
  });
  without_context("cuMemHostGetDevicePointer_v2", [](const Sim& s) {
    cu::DevicePtr p = 0;
    return s.fn<cu::MemHostGetDevicePointerFn>("cuMemHostGetDevicePointer_v2")(&p, host, 0);
  });
  without_context("cuMemcpyHtoDAsync_v2",
                  [=](const Sim& s) { return s.fn<cu::MemcpyHtoDAsyncFn>("cuMemcpyHtoDAsync_v2")(d0, host, 4, nullptr); });
  without_context("cuMemcpyDtoHAsync_v2",
                  [=](const Sim& s) { return s.fn<cu::MemcpyDtoHAsyncFn>("cuMemcpyDtoHAsync_v2")(host, d0, 4, nullptr); });
  without_context("cuMemcpyHtoD_v2", [=](const Sim& s) { return s.fn<cu::MemcpyHtoDFn>("cuMemcpyHtoD_v2")(d0, host, 4); });
  without_context("cuMemcpyDtoH_v2", [=](const Sim& s) { return s.fn<cu::MemcpyDtoHFn>("cuMemcpyDtoH_v2")(host, d0, 4); });
  without_context("cuMemsetD8_v2", [=](const Sim& s) { return s.fn<cu::MemsetD8Fn>("cuMemsetD8_v2")(d0, 0, 4); });
  without_context("cuStreamCreate", [](const Sim& s) {
    cu::Stream st = nullptr;
    return s.fn<cu::StreamCreateFn>("cuStreamCreate")(&st, cu::kStreamNonBlocking);
  });
  // The NULL (legacy) stream is the current context's.
  without_context("cuStreamSynchronize(NULL)",
                  [](const Sim& s) { return s.fn<cu::StreamSynchronizeFn>("cuStreamSynchronize")(nullptr); });
  without_context("cuStreamQuery(NULL)", [](const Sim& s) { return s.fn<cu::StreamQueryFn>("cuStreamQuery")(nullptr); });
  without_context("cuEventCreate", [](const Sim& s) {
    cu::Event e = nullptr;
    return s.fn<cu::EventCreateFn>("cuEventCreate")(&e, cu::kEventDefault);
  });
  without_context("cuEventRecord(NULL stream)",
                  [](const Sim& s) { return s.fn<cu::EventRecordFn>("cuEventRecord")(nullptr, nullptr); });
  without_context("cuModuleLoadData", [](const Sim& s) {
    cu::Module m = nullptr;
    return s.fn<cu::ModuleLoadDataFn>("cuModuleLoadData")(&m, cuda_kernels::kPtx);
  });
  without_context("cuModuleGetFunction", [](const Sim& s) {
    cu::Function f = nullptr;
    return s.fn<cu::ModuleGetFunctionFn>("cuModuleGetFunction")(&f, nullptr, "interprobe_copy");
  });
  without_context("cuLaunchKernel", [](const Sim& s) {
    return s.fn<cu::LaunchKernelFn>("cuLaunchKernel")(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
  });
  without_context("cuCtxEnablePeerAccess",
                  [](const Sim& s) { return s.fn<cu::CtxEnablePeerAccessFn>("cuCtxEnablePeerAccess")(nullptr, 0); });
  return r;
}

Sim fresh_sim() {
  interprobe::testing::sim_load(R"({"devices": [{}, {}], "peer_access": "none"})");  // not initialized
  Sim s;
  s.handle = dlopen(INTERPROBE_SIM_CUDA, RTLD_NOW | RTLD_NOLOAD);
  return s;
}

TEST(SimCudaConformance, EveryEntryPointRefusesWhatTheRealDriverRefuses) {
  Sim sim = fresh_sim();
  ASSERT_NE(sim.handle, nullptr);
  auto table = rules();
  ASSERT_GE(table.size(), 40u);
  for (const Rule& rule : table) {
    if (rule.before != Before::cu_init) continue;
    EXPECT_EQ(rule.call(sim), rule.expected) << rule.entry << " before cuInit; rule: " << kNotInitialized;
  }
  ASSERT_EQ(sim.fn<cu::InitFn>("cuInit")(0), cu::kSuccess);
  ASSERT_EQ(sim.fn<cu::CtxSetCurrentFn>("cuCtxSetCurrent")(nullptr), cu::kSuccess);
  for (const Rule& rule : table) {
    if (rule.before != Before::context) continue;
    EXPECT_EQ(rule.call(sim), rule.expected) << rule.entry << " without a current context; rule: " << kInvalidContext;
  }
  // Calls that need no context still work without one (cuda.h: they take a device, or nothing).
  int count = 0;
  EXPECT_EQ(sim.fn<cu::DeviceGetCountFn>("cuDeviceGetCount")(&count), cu::kSuccess);
  int version = 0;
  EXPECT_EQ(sim.fn<cu::DriverGetVersionFn>("cuDriverGetVersion")(&version), cu::kSuccess);
}

// Another GPU's memory from a kernel needs peer access (cuCtxEnablePeerAccess: "Enables direct
// access to memory allocations in a peer context"): without it the SM copy kernel is refused.
TEST(SimCudaConformance, AKernelReadingAnotherGpusMemoryNeedsPeerAccess) {
  Sim sim = fresh_sim();
  ASSERT_EQ(sim.fn<cu::InitFn>("cuInit")(0), cu::kSuccess);
  cu::Context c0 = nullptr, c1 = nullptr;
  ASSERT_EQ(sim.fn<cu::DevicePrimaryCtxRetainFn>("cuDevicePrimaryCtxRetain")(&c0, 0), cu::kSuccess);
  ASSERT_EQ(sim.fn<cu::DevicePrimaryCtxRetainFn>("cuDevicePrimaryCtxRetain")(&c1, 1), cu::kSuccess);
  cu::DevicePtr on1 = 0, on0 = 0;
  ASSERT_EQ(sim.fn<cu::CtxSetCurrentFn>("cuCtxSetCurrent")(c1), cu::kSuccess);
  ASSERT_EQ(sim.fn<cu::MemAllocFn>("cuMemAlloc_v2")(&on1, 4096), cu::kSuccess);
  ASSERT_EQ(sim.fn<cu::CtxSetCurrentFn>("cuCtxSetCurrent")(c0), cu::kSuccess);
  ASSERT_EQ(sim.fn<cu::MemAllocFn>("cuMemAlloc_v2")(&on0, 4096), cu::kSuccess);
  cu::Module m = nullptr;
  cu::Function f = nullptr;
  ASSERT_EQ(sim.fn<cu::ModuleLoadDataFn>("cuModuleLoadData")(&m, cuda_kernels::kPtx), cu::kSuccess);
  ASSERT_EQ(sim.fn<cu::ModuleGetFunctionFn>("cuModuleGetFunction")(&f, m, "interprobe_copy"), cu::kSuccess);
  void* dst = reinterpret_cast<void*>(static_cast<std::uintptr_t>(on0));
  void* src = reinterpret_cast<void*>(static_cast<std::uintptr_t>(on1));
  std::uint64_t bytes = 4096;
  void* params[] = {&dst, &src, &bytes};
  auto launch = sim.fn<cu::LaunchKernelFn>("cuLaunchKernel");
  EXPECT_EQ(launch(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), cu::kErrorIllegalAddress);
  src = dst;  // the device's own memory: fine
  EXPECT_EQ(launch(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), cu::kSuccess);
}

}  // namespace
