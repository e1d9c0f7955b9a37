#pragma once
// The data pattern copies are verified with, identical on host and GPU: 64-bit words, word i
// = mix(i, seed), little-endian bytes. Plain header: no CUDA include, usable from .cu files.
#include <cstdint>

#if defined(__CUDACC__)
#define INTERPROBE_HOST_DEVICE __host__ __device__
#else
#define INTERPROBE_HOST_DEVICE
#endif

namespace interprobe {

INTERPROBE_HOST_DEVICE inline std::uint64_t pattern_word(std::uint64_t index, std::uint64_t seed) {
  // splitmix64 finalizer: neighbouring words differ in every byte, so shifted or stale data fails.
  std::uint64_t z = index + seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

INTERPROBE_HOST_DEVICE inline std::uint8_t pattern_byte(std::uint64_t offset, std::uint64_t seed) {
  return static_cast<std::uint8_t>(pattern_word(offset / 8, seed) >> (8 * (offset % 8)));
}

// Host helpers (pattern.cpp): fill `bytes` at `data` with the pattern, or count the bytes that
// differ from it (0 = intact).
void fill_pattern(void* data, std::uint64_t bytes, std::uint64_t seed);
// dst[i] = ~src[i]: a destination that differs from the source in every byte.
void fill_inverse(void* dst, const void* src, std::uint64_t bytes);
std::uint64_t count_pattern_mismatches(const void* data, std::uint64_t bytes, std::uint64_t seed);

}  // namespace interprobe
