#pragma once
// What vendor libraries this machine has, and their versions, for `--version` and the report's
// tool.libraries. Never throws: absence is data.
#include <map>
#include <string>

#include "probes/common/dynlib.hpp"
#include "report/model/report.hpp"

namespace interprobe {

report::LibraryInfo probe_vendor_library(VendorLibrary lib);
std::map<std::string, report::LibraryInfo> probe_vendor_libraries();

// Runtime version of the statically linked CUDA runtime and the device count it sees, when
// the build has CUDA; otherwise a LibraryInfo saying it was compiled out.
report::LibraryInfo probe_cuda_runtime();

}  // namespace interprobe
