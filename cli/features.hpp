#pragma once
#include "model/report.hpp"

namespace interprobe::cli {

// What this binary was compiled with: cuda, nccl, nvml, hwloc, libpci, mpi.
report::CompiledFeatures compiled_features();
const char* interprobe_version();

}  // namespace interprobe::cli
