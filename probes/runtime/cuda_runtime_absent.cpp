// Compiled when the build has no CUDA.
#include "probes/runtime/vendor_versions.hpp"

namespace interprobe {

report::LibraryInfo probe_cuda_runtime(bool) {
  report::LibraryInfo info;
  info.found = false;
  info.reason = "compiled out: this interprobe was built without CUDA; rebuild with -DINTERPROBE_WITH_CUDA=ON";
  return info;
}

}  // namespace interprobe
