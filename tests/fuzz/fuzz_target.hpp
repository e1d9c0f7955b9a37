#pragma once
// The entry point every fuzz target defines. It is linked either with libFuzzer
// (-DINTERPROBE_FUZZ=ON, clang) or with replay_main.cpp, which runs the seed corpus and the kept
// regressions as a CTest test in every build. A target returns normally when the code under test
// accepted or refused the input as documented (InputError); anything else (a crash, a sanitizer
// report, another exception, a broken property checked with fuzz_require) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace interprobe::fuzz {

// A property the code under test promises; abort() makes libFuzzer keep the input as a crash.
inline void fuzz_require(bool holds, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz property broken: %s\n", what);
  std::abort();
}

// No C0 control but newline and tab, no DEL, no C1 control (U+0080..U+009F as UTF-8): text that
// cannot drive a terminal.
inline bool terminal_safe(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return false;
    if (c == 0xc2 && i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xe0) == 0x80) return false;
  }
  return true;
}

}  // namespace interprobe::fuzz
