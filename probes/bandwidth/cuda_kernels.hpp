#pragma once
// Kernels of the CUDA copy engine (cuda_kernels.cu), callable from plain C++. No CUDA header:
// streams are the runtime's opaque CUstream_st. Each launcher returns the cudaError_t of the
// launch as an int (0 = success).
#include <cstdint>

struct CUstream_st;

namespace interprobe::cuda_kernels {

// Spins until *flag != 0 or `timeout_ns` passes (then sets *timed_out), holding the stream so
// that every copy is queued before the first one starts. Both pointers: mapped host memory.
int launch_hold(CUstream_st* stream, const volatile int* flag, int* timed_out, std::uint64_t timeout_ns);

// dst[0..bytes) = src[0..bytes) by SM threads (16-byte loads and stores where aligned).
int launch_copy(CUstream_st* stream, void* dst, const void* src, std::uint64_t bytes, int blocks);

// Fills with the verification pattern (probes/bandwidth/pattern.hpp), same bytes as on host.
int launch_fill_pattern(CUstream_st* stream, void* data, std::uint64_t bytes, std::uint64_t seed, int blocks);

// Adds the number of bytes differing from the pattern to *mismatches (device memory).
int launch_count_mismatches(CUstream_st* stream, const void* data, std::uint64_t bytes, std::uint64_t seed,
                            unsigned long long* mismatches, int blocks);

}  // namespace interprobe::cuda_kernels
