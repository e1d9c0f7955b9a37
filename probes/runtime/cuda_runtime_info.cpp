// Compiled when the NCCL backend links the CUDA runtime statically (the only part that still
// does): the version it was built with. The runtime is not asked about devices: the driver line
// ("cuda") carries them, from the driver API.
#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "probes/runtime/vendor_versions.hpp"

namespace interprobe {

report::LibraryInfo probe_cuda_runtime() {
  report::LibraryInfo info;
  info.found = true;
  info.path = "statically linked (NCCL backend only)";
  info.version = fmt::format("{}.{}", CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
  info.version_source = "compiled in";
  return info;
}

}  // namespace interprobe
