#include "probes/bandwidth/cuda_kernels.hpp"

#include "probes/gpu/cuda_driver.hpp"

namespace interprobe::cuda_kernels {

namespace {

constexpr unsigned kThreads = kThreadsPerBlock;

cu::Function function(int device, const char* name) {
  return cu::module_function(kPtx, device, name, "the copy engine's PTX kernels");
}

unsigned blocks_for(std::uint64_t items, int max_blocks) {
  std::uint64_t needed = (items + kThreads - 1) / kThreads;
  if (needed < 1) needed = 1;
  return static_cast<unsigned>(needed < static_cast<std::uint64_t>(max_blocks) ? needed : max_blocks);
}

void launch(int device, const char* name, unsigned blocks, unsigned threads, cu::Stream stream, void** params) {
  cu::check(cu::driver().launch_kernel(function(device, name), blocks, 1, 1, threads, 1, 1, 0, stream, params, nullptr),
            name);
}

}  // namespace

void launch_hold(int device, cu::Stream stream, const volatile int* flag, int* timed_out, std::uint64_t timeout_ns) {
  void* params[] = {&flag, &timed_out, &timeout_ns};
  launch(device, "interprobe_hold", 1, 1, stream, params);
}

void launch_copy(int device, cu::Stream stream, void* dst, const void* src, std::uint64_t bytes, int blocks) {
  void* params[] = {&dst, &src, &bytes};
  launch(device, "interprobe_copy", blocks_for(bytes / 16 + 1, blocks), kThreads, stream, params);
}

void launch_fill_pattern(int device, cu::Stream stream, void* data, std::uint64_t bytes, std::uint64_t seed, int blocks) {
  void* params[] = {&data, &bytes, &seed};
  launch(device, "interprobe_fill_pattern", blocks_for(bytes, blocks), kThreads, stream, params);
}

void launch_count_mismatches(int device, cu::Stream stream, const void* data, std::uint64_t bytes, std::uint64_t seed,
                             unsigned long long* mismatches, int blocks) {
  void* params[] = {&data, &bytes, &seed, &mismatches};
  launch(device, "interprobe_count_mismatches", blocks_for(bytes, blocks), kThreads, stream, params);
}

}  // namespace interprobe::cuda_kernels

namespace interprobe::cuda {

namespace {

const cu::Driver& drv() { return cu::driver(); }
void* hptr(cu::DevicePtr p) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)); }

}  // namespace

HoldFlag::HoldFlag(int device) {
  DeviceGuard guard(device);
  void* p = nullptr;
  cu::check(drv().mem_host_alloc(&p, 2 * sizeof(int), cu::kMemHostAllocPortable | cu::kMemHostAllocDeviceMap),
            "cuMemHostAlloc");
  flag_ = static_cast<volatile int*>(p);
  timed_out_ = static_cast<int*>(p) + 1;
  arm();
}
HoldFlag::~HoldFlag() {
  if (flag_) (void)drv().mem_free_host(const_cast<int*>(flag_));
}
void HoldFlag::arm() {
  *flag_ = 0;
  __atomic_store_n(timed_out_, 0, __ATOMIC_RELEASE);
}
void HoldFlag::hold(const Stream& stream, std::uint64_t timeout_ns) {
  DeviceGuard guard(stream.device());
  cu::DevicePtr flag_device = 0, timed_out_device = 0;
  cu::check(drv().mem_host_get_device_pointer(&flag_device, const_cast<int*>(flag_), 0), "cuMemHostGetDevicePointer");
  cu::check(drv().mem_host_get_device_pointer(&timed_out_device, timed_out_, 0), "cuMemHostGetDevicePointer");
  cuda_kernels::launch_hold(stream.device(), stream.get(), static_cast<const volatile int*>(hptr(flag_device)),
                            static_cast<int*>(hptr(timed_out_device)), timeout_ns);
}
void HoldFlag::release() { __atomic_store_n(const_cast<int*>(flag_), 1, __ATOMIC_RELEASE); }
bool HoldFlag::timed_out() const { return __atomic_load_n(timed_out_, __ATOMIC_ACQUIRE) != 0; }

}  // namespace interprobe::cuda
