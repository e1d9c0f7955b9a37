#include "probes/compute/cublaslt_library.hpp"

#include <memory>

#include <fmt/format.h>

#include "common/dynlib.hpp"
#include "common/errors.hpp"

namespace interprobe::cublaslt {

namespace {

const char* status_name(Status s) {
  switch (s) {
    case kSuccess: return "CUBLAS_STATUS_SUCCESS";
    case kNotInitialized: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case kAllocFailed: return "CUBLAS_STATUS_ALLOC_FAILED";
    case kInvalidValue: return "CUBLAS_STATUS_INVALID_VALUE";
    case kArchMismatch: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case kExecutionFailed: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case kInternalError: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case kNotSupported: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "cuBLAS status";
  }
}

Library load_from(std::unique_ptr<DynamicLibrary> dl) {
  Library lib;
  lib.path = dl->path();
  // The simulator (tests/sim/cublaslt) exports this marker, so a simulated run never passes for a real one.
  if (auto marker = dl->symbol<const char*()>("interprobe_sim_version")) lib.simulated = marker();
  std::string missing;
#define INTERPROBE_CUBLASLT_RESOLVE(member, type, name) \
  lib.member = dl->symbol<type>(name);                  \
  if (!lib.member) missing += (missing.empty() ? "" : ", ") + std::string(name);
  INTERPROBE_CUBLASLT_ENTRY_POINTS(INTERPROBE_CUBLASLT_RESOLVE)
#undef INTERPROBE_CUBLASLT_RESOLVE
  if (!lib.get_version)
    throw UnsupportedError(fmt::format("{} is not cuBLASLt (no cublasLtGetVersion); {}", lib.path,
                                       spec_of(VendorLibrary::cublaslt).install_hint));
  lib.version = version_text(lib.get_version());
  if (!missing.empty())
    throw UnsupportedError(fmt::format("cuBLASLt {} ({}) lacks entry points interprobe needs: {}; install cuBLAS 12 or "
                                       "newer",
                                       lib.path, lib.version, missing));
  dl.release();  // never unloaded, see library()
  return lib;
}

}  // namespace

std::string version_text(std::size_t v) { return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100); }

std::string Library::describe(Status s) const {
  const char* text = get_status_string ? get_status_string(s) : nullptr;
  return fmt::format("{} ({}){}{}", status_name(s), s, text ? ": " : "", text ? text : "");
}

void Library::check(Status s, const char* call) const {
  if (s != kSuccess) throw VendorError(call, s, describe(s));
}

const Library& library() { return load_once<Library, UnsupportedError>(VendorLibrary::cublaslt, "no cuBLASLt", load_from); }

}  // namespace interprobe::cublaslt
