#pragma once
#include <map>
#include <string>

namespace interprobe::cli {

// What this binary was compiled with: cuda, nccl, nvml, hwloc, libpci, mpi.
std::map<std::string, bool> compiled_features();
const char* interprobe_version();

}  // namespace interprobe::cli
