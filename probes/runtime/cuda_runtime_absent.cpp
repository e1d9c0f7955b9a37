// Compiled when nothing links the CUDA runtime (no NCCL backend in this build).
#include "probes/runtime/vendor_versions.hpp"

namespace interprobe {

report::LibraryInfo probe_cuda_runtime() {
  report::LibraryInfo info;
  info.found = false;
  info.reason = "not linked: the GPU paths use the CUDA driver API (libcuda) directly";
  return info;
}

}  // namespace interprobe
