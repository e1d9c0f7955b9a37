#include "probes/bandwidth/pattern.hpp"

#include <cstring>

namespace interprobe {

void fill_pattern(void* data, std::uint64_t bytes, std::uint64_t seed) {
  auto* out = static_cast<unsigned char*>(data);
  std::uint64_t words = bytes / 8;
  for (std::uint64_t i = 0; i < words; ++i) {
    std::uint64_t w = pattern_word(i, seed);
    std::memcpy(out + i * 8, &w, 8);  // buffers need not be 8-byte aligned
  }
  for (std::uint64_t b = words * 8; b < bytes; ++b) out[b] = pattern_byte(b, seed);
}

void fill_inverse(void* dst, const void* src, std::uint64_t bytes) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  for (std::uint64_t i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(~in[i]);
}

std::uint64_t count_pattern_mismatches(const void* data, std::uint64_t bytes, std::uint64_t seed) {
  const auto* in = static_cast<const unsigned char*>(data);
  std::uint64_t words = bytes / 8, bad = 0;
  for (std::uint64_t i = 0; i < words; ++i) {
    std::uint64_t w = 0;
    std::memcpy(&w, in + i * 8, 8);
    std::uint64_t want = pattern_word(i, seed);
    if (w != want)
      for (int b = 0; b < 8; ++b) bad += ((w >> (8 * b)) & 0xff) != ((want >> (8 * b)) & 0xff);
  }
  for (std::uint64_t b = words * 8; b < bytes; ++b) bad += in[b] != pattern_byte(b, seed);
  return bad;
}

}  // namespace interprobe
