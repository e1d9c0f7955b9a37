// Compiled when the build has no CUDA.
#include "probes/bandwidth/cuda_engine.hpp"
#include "common/errors.hpp"

namespace interprobe {

CudaPaths make_cuda_paths(const CudaPlan&, std::shared_ptr<const NumaPlacement>, const HostRoot&) {
  throw UnsupportedError("compiled out: this interprobe was built without CUDA; rebuild with -DINTERPROBE_WITH_CUDA=ON");
}

}  // namespace interprobe
