// Compiled only when the build has CUDA: the runtime is linked statically, so this reports the
// version we were built with and what it sees (it loads libcuda.so.1 itself, lazily).
#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "probes/runtime/vendor_versions.hpp"

namespace interprobe {

report::LibraryInfo probe_cuda_runtime() {
  report::LibraryInfo info;
  info.found = true;
  info.path = "statically linked";
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
    info.version = fmt::format("{}.{}", runtime / 1000, (runtime % 1000) / 10);
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    info.reason = fmt::format("cudaGetDeviceCount: {} ({})", cudaGetErrorString(rc), static_cast<int>(rc));
  } else {
    info.devices = count;
  }
  return info;
}

}  // namespace interprobe
