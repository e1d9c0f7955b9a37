#pragma once
// Which vendor libraries the report header lists, with their versions. Never throws: absence
// is data. Nothing here loads a library: a version is asked from a library only when a probe
// has loaded it already; otherwise the file on disk tells it (file name, else SONAME).
#include <map>
#include <string>

#include "common/dynlib.hpp"
#include "model/report.hpp"

namespace interprobe {

// The libraries this process's probes opened or tried to (and the CUDA driver when a library
// such as NCCL's runtime loaded it), keyed "cuda", "nvml", "nccl", "cublaslt", "cudart".
std::map<std::string, report::LibraryInfo> opened_vendor_libraries();
// Every vendor library (--version, --verbose): the opened ones as above, the others located
// the way the loader would find them, without loading them.
std::map<std::string, report::LibraryInfo> all_vendor_libraries_info();

// One library on disk, not loaded: path, and the version its file name or SONAME carries.
report::LibraryInfo locate_vendor_library(VendorLibrary lib);

// The CUDA runtime: not linked (the GPU paths use the driver API); the line says so, so that a
// reader of an older report's "cudart" line knows where it went.
report::LibraryInfo probe_cuda_runtime();

}  // namespace interprobe
