#include <cuda_runtime.h>

#include "probes/bandwidth/cuda_kernels.hpp"
#include "probes/bandwidth/pattern.hpp"

namespace interprobe::cuda_kernels {

namespace {

constexpr int kThreads = 512;

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void hold_kernel(const volatile int* flag, int* timed_out, std::uint64_t timeout_ns) {
  std::uint64_t start = global_timer_ns();
  while (*flag == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}

__global__ void copy_kernel(unsigned char* dst, const unsigned char* src, std::uint64_t bytes) {
  std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  bool aligned = (reinterpret_cast<std::uintptr_t>(dst) % 16 == 0) && (reinterpret_cast<std::uintptr_t>(src) % 16 == 0);
  std::uint64_t vectors = aligned ? bytes / 16 : 0;
  const uint4* s4 = reinterpret_cast<const uint4*>(src);
  uint4* d4 = reinterpret_cast<uint4*>(dst);
  for (std::uint64_t i = tid; i < vectors; i += stride) d4[i] = s4[i];
  for (std::uint64_t i = vectors * 16 + tid; i < bytes; i += stride) dst[i] = src[i];
}

__global__ void fill_kernel(unsigned char* data, std::uint64_t bytes, std::uint64_t seed) {
  std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = tid; i < bytes; i += stride) data[i] = pattern_byte(i, seed);
}

__global__ void count_kernel(const unsigned char* data, std::uint64_t bytes, std::uint64_t seed,
                             unsigned long long* mismatches) {
  std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  unsigned long long bad = 0;
  for (std::uint64_t i = tid; i < bytes; i += stride) bad += data[i] != pattern_byte(i, seed);
  if (bad) atomicAdd(mismatches, bad);
}

int blocks_for(std::uint64_t items, int max_blocks) {
  std::uint64_t needed = (items + kThreads - 1) / kThreads;
  if (needed < 1) needed = 1;
  return static_cast<int>(needed < static_cast<std::uint64_t>(max_blocks) ? needed : max_blocks);
}

}  // namespace

int launch_hold(CUstream_st* stream, const volatile int* flag, int* timed_out, std::uint64_t timeout_ns) {
  hold_kernel<<<1, 1, 0, stream>>>(flag, timed_out, timeout_ns);
  return static_cast<int>(cudaGetLastError());
}

int launch_copy(CUstream_st* stream, void* dst, const void* src, std::uint64_t bytes, int blocks) {
  copy_kernel<<<blocks_for(bytes / 16 + 1, blocks), kThreads, 0, stream>>>(static_cast<unsigned char*>(dst),
                                                                          static_cast<const unsigned char*>(src), bytes);
  return static_cast<int>(cudaGetLastError());
}

int launch_fill_pattern(CUstream_st* stream, void* data, std::uint64_t bytes, std::uint64_t seed, int blocks) {
  fill_kernel<<<blocks_for(bytes, blocks), kThreads, 0, stream>>>(static_cast<unsigned char*>(data), bytes, seed);
  return static_cast<int>(cudaGetLastError());
}

int launch_count_mismatches(CUstream_st* stream, const void* data, std::uint64_t bytes, std::uint64_t seed,
                            unsigned long long* mismatches, int blocks) {
  count_kernel<<<blocks_for(bytes, blocks), kThreads, 0, stream>>>(static_cast<const unsigned char*>(data), bytes, seed,
                                                                   mismatches);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace interprobe::cuda_kernels
