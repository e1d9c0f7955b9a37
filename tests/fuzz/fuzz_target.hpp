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

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace interprobe::fuzz {

// A property the code under test promises; abort() makes libFuzzer keep the input as a crash.
inline void fuzz_require(bool holds, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz property broken: %s\n", what);
  std::abort();
}

}  // namespace interprobe::fuzz
