#pragma once
// The entry point every fuzz target defines. It is linked either with libFuzzer
// (-DINTERPROBE_FUZZ=ON, clang) or with replay_main.cpp, which runs the seed corpus and the kept
// regressions as a CTest test in every build. A target returns normally when the code under test
// accepted or refused the input as documented (InputError); anything else (a crash, a sanitizer
// report, another exception, a broken property checked with fuzz_require) is a finding.
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace interprobe::fuzz {

// A property the code under test promises; abort() makes libFuzzer keep the input as a crash.
inline void fuzz_require(bool holds, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz property broken: %s\n", what);
  std::abort();
}

// A directory for the files a target writes each run, removed at exit. On tmpfs when there is
// one: ext4 flushes a file that is truncated and rewritten (auto_da_alloc), 20 ms a run.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = std::string(std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp") +
                          "/interprobe-fuzz-XXXXXX";
    fuzz_require(::mkdtemp(pattern.data()) != nullptr, "a scratch directory can be made");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace interprobe::fuzz
