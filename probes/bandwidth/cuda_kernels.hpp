#pragma once
// The copy engine's kernels: PTX text (kernels/cuda_kernels.ptx, ISA 8.0) loaded into each
// device's primary context with cuModuleLoadData and launched with cuLaunchKernel. The device's
// context must be current (cuda::DeviceGuard). Each launcher throws VendorError on failure.
#include <cstdint>

#include "probes/gpu/cuda_device.hpp"
#include "probes/gpu/cuda_driver_api.hpp"

namespace interprobe::cuda_kernels {

// Threads per block of every kernel here (the occupancy sums use it).
inline constexpr int kThreadsPerBlock = 512;

extern const char* const kPtx;  // generated from kernels/cuda_kernels.ptx

// Spins until *flag != 0 or `timeout_ns` passes (then sets *timed_out), holding the stream so
// that every copy is queued before the first one starts. Both pointers: mapped host memory.
void launch_hold(int device, cu::Stream stream, const volatile int* flag, int* timed_out, std::uint64_t timeout_ns);

// dst[0..bytes) = src[0..bytes) by SM threads (16-byte loads and stores where aligned).
void launch_copy(int device, cu::Stream stream, void* dst, const void* src, std::uint64_t bytes, int blocks);

// Fills with the verification pattern (probes/bandwidth/pattern.hpp), same bytes as on host.
void launch_fill_pattern(int device, cu::Stream stream, void* data, std::uint64_t bytes, std::uint64_t seed, int blocks);

// Adds the number of bytes differing from the pattern to *mismatches (device memory).
void launch_count_mismatches(int device, cu::Stream stream, const void* data, std::uint64_t bytes, std::uint64_t seed,
                             unsigned long long* mismatches, int blocks);

}  // namespace interprobe::cuda_kernels

namespace interprobe::cuda {

// A host flag in mapped pinned memory that hold kernels spin on.
class HoldFlag {
 public:
  // The flag is pinned host memory allocated with `device`'s context current (cuMemHostAlloc
  // needs one); portable and mapped, so a hold on any device can read it.
  explicit HoldFlag(int device);
  ~HoldFlag();
  HoldFlag(const HoldFlag&) = delete;
  HoldFlag& operator=(const HoldFlag&) = delete;
  // Queues a kernel on `stream` that waits for release() (at most `timeout_ns`).
  void hold(const Stream& stream, std::uint64_t timeout_ns);
  void release();
  void arm();             // before holding: flag down, timeout cleared
  bool timed_out() const;

 private:
  volatile int* flag_ = nullptr;
  int* timed_out_ = nullptr;
};

}  // namespace interprobe::cuda
