// The CUDA runtime is not part of interprobe: the copy engine and the NCCL backend use the driver
// API (probes/gpu); NCCL and cuBLASLt bring their own runtime. The "cudart" line says so.
#include "probes/runtime/vendor_versions.hpp"

namespace interprobe {

report::LibraryInfo probe_cuda_runtime() {
  report::LibraryInfo info;
  info.found = false;
  info.reason = "not linked: interprobe uses the CUDA driver API (libcuda) directly";
  return info;
}

}  // namespace interprobe
