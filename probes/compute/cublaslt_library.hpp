#pragma once
// cuBLASLt opened at run time (libcublasLt.so.13/.12, or --cublaslt-lib / INTERPROBE_CUBLASLT_LIB)
// with the entry points of cublaslt_api.hpp resolved by dlsym. No vendor header.
#include <optional>
#include <string>

#include "probes/compute/cublaslt_api.hpp"

namespace interprobe::cublaslt {

struct Library {
#define INTERPROBE_CUBLASLT_MEMBER(member, type, name) type* member = nullptr;
  INTERPROBE_CUBLASLT_ENTRY_POINTS(INTERPROBE_CUBLASLT_MEMBER)
#undef INTERPROBE_CUBLASLT_MEMBER
  std::string path;                      // the file loaded
  std::string version;                   // "12.8.5", from cublasLtGetVersion
  std::optional<std::string> simulated;  // the test simulator's version when it is what was loaded

  // "CUBLAS_STATUS_NOT_SUPPORTED (15): the functionality requested is not supported"
  std::string describe(Status s) const;
  // Throws VendorError(call, status, description) when s is not success.
  void check(Status s, const char* call) const;
};

// Loads cuBLASLt once per process and keeps it (its CUDA runtime keeps state in the primary
// contexts). Throws UnsupportedError naming the reason: no library, not cuBLASLt, entry points
// missing. A failure is remembered too.
const Library& library();

// "12.8.5" from cublasLtGetVersion's major*10000 + minor*100 + patch.
std::string version_text(std::size_t version);

}  // namespace interprobe::cublaslt
