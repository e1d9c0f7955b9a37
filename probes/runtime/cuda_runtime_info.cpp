// Compiled only when the build has CUDA: the runtime is linked statically, so this reports the
// version we were built with and, when the driver is loaded already, what it sees (asking
// before that would load libcuda.so.1 only for the header).
#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "probes/runtime/vendor_versions.hpp"

namespace interprobe {

report::LibraryInfo probe_cuda_runtime(bool ask_devices) {
  report::LibraryInfo info;
  info.found = true;
  info.path = "statically linked";
  info.version = fmt::format("{}.{}", CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
  info.version_source = report::VersionSource::compiled_in;
  if (!ask_devices) return info;
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    info.reason = fmt::format("cudaGetDeviceCount: {} ({})", cudaGetErrorString(rc), static_cast<int>(rc));
  } else {
    info.device_count = count;
  }
  return info;
}

}  // namespace interprobe
