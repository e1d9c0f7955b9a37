// Source of probes/bandwidth/kernels/cuda_kernels.ptx, which is what the binary carries (the
// driver JIT-compiles it). Regenerate with scripts/regenerate-ptx after editing; the build never
// runs nvcc. extern "C": the driver finds each kernel by this plain name (cuModuleGetFunction).
#include <cstdint>

#include "probes/bandwidth/pattern.hpp"

using interprobe::pattern_byte;

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins until *flag != 0 or timeout_ns passes (then sets *timed_out); both in mapped host memory.
extern "C" __global__ void interprobe_hold(const volatile int* flag, int* timed_out, std::uint64_t timeout_ns) {
  std::uint64_t start = global_timer_ns();
  while (*flag == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}

// 16-byte loads each thread issues before it stores any: nvbandwidth's stridingMemcpyKernel keeps
// 12 in flight (pipe_0 .. pipe_11). One at a time, each thread waits a whole round trip over
// NVLink or PCIe per 16 bytes and the SM copy reads low against nvbandwidth's.
constexpr int kCopyLoadsInFlight = 12;

// dst[0..bytes) = src[0..bytes), 16-byte loads and stores where both are aligned.
extern "C" __global__ void interprobe_copy(unsigned char* dst, const unsigned char* src, std::uint64_t bytes) {
  std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  bool aligned = (reinterpret_cast<std::uintptr_t>(dst) % 16 == 0) && (reinterpret_cast<std::uintptr_t>(src) % 16 == 0);
  std::uint64_t vectors = aligned ? bytes / 16 : 0;
  const uint4* s4 = reinterpret_cast<const uint4*>(src);
  uint4* d4 = reinterpret_cast<uint4*>(dst);
  std::uint64_t i = tid;
  for (; i + (kCopyLoadsInFlight - 1) * stride < vectors; i += kCopyLoadsInFlight * stride) {
    uint4 pipe[kCopyLoadsInFlight];
#pragma unroll
    for (int u = 0; u < kCopyLoadsInFlight; ++u) pipe[u] = s4[i + u * stride];
#pragma unroll
    for (int u = 0; u < kCopyLoadsInFlight; ++u) d4[i + u * stride] = pipe[u];
  }
  for (; i < vectors; i += stride) d4[i] = s4[i];
  for (std::uint64_t i = vectors * 16 + tid; i < bytes; i += stride) dst[i] = src[i];
}

extern "C" __global__ void interprobe_fill_pattern(unsigned char* data, std::uint64_t bytes, std::uint64_t seed) {
  std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = tid; i < bytes; i += stride) data[i] = pattern_byte(i, seed);
}

// Adds the number of bytes differing from the pattern to *mismatches (device memory).
extern "C" __global__ void interprobe_count_mismatches(const unsigned char* data, std::uint64_t bytes,
                                                       std::uint64_t seed, unsigned long long* mismatches) {
  std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  unsigned long long bad = 0;
  for (std::uint64_t i = tid; i < bytes; i += stride) bad += data[i] != pattern_byte(i, seed);
  if (bad) atomicAdd(mismatches, bad);
}
