#pragma once
// Error taxonomy shared by every probe and the CLI.
// InputError -> exit 2, UnsupportedError -> probe status "unsupported" (exit 4 when it is the
// only probe asked for), InterruptedError -> "skipped: interrupted" (exit 130), VendorError ->
// a vendor API call failed (probe "failed").
#include <source_location>
#include <stdexcept>
#include <string>

namespace interprobe {

#if defined(__cpp_lib_source_location)
using SourceLocation = std::source_location;
#else
// clang 14 (the fuzz build, tests/fuzz) has no __builtin_source_location, so libstdc++ 12 hides
// std::source_location; these builtins give the caller's file and line in GCC and clang alike.
struct SourceLocation {
  static constexpr SourceLocation current(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) noexcept {
    return SourceLocation{file, line};
  }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr unsigned line() const noexcept { return line_; }
  const char* file_ = "";
  unsigned line_ = 0;
};
#endif

// Bad user input or bad input file: the message names the file/field and what to do.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A path inside --root tried to leave the root (.., symlink); always an input error.
class RootEscapeError : public InputError {
 public:
  using InputError::InputError;
};

// The probe cannot run on this machine (no GPU, no driver, library missing, compiled out).
class UnsupportedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The user pressed Ctrl-C; probes stop at the next check and keep what they measured.
class InterruptedError : public std::runtime_error {
 public:
  InterruptedError() : std::runtime_error("interrupted") {}
};

// The user chose not to run this probe (`run --skip`/`--only`): status "skipped" with the reason.
class SkippedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A vendor API (CUDA, NVML, NCCL, cuBLASLt, MPI) returned an error code.
class VendorError : public std::runtime_error {
 public:
  VendorError(std::string call, long long code, std::string detail,
              SourceLocation where = SourceLocation::current());
  const std::string& call() const { return call_; }
  long long code() const { return code_; }

 private:
  std::string call_;
  long long code_;
};

}  // namespace interprobe
