// Compiled when the build has no CUDA or no nccl.h: the NCCL backend says how to get it.
#include "probes/collective/nccl_backend.hpp"
#include "common/errors.hpp"

namespace interprobe::collective {

namespace {
constexpr const char* kWhy =
    "compiled out: the NCCL backend needs CUDA and nccl.h at build time; rebuild with -DINTERPROBE_WITH_CUDA=ON "
    "-DINTERPROBE_WITH_NCCL=ON (set NCCL_ROOT to a directory with include/nccl.h)";
}

bool nccl_compiled_in() { return false; }
int visible_gpu_count(std::string* why) {
  if (why) *why = kWhy;
  return 0;
}
std::unique_ptr<CollectiveBackend> make_nccl_backend(RankGroup&) { throw UnsupportedError(kWhy); }

}  // namespace interprobe::collective
