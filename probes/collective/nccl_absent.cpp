// Compiled when the build turned the NCCL backend off (-DINTERPROBE_WITH_NCCL=OFF).
#include "probes/collective/nccl_backend.hpp"
#include "common/errors.hpp"

namespace interprobe::collective {

namespace {
constexpr const char* kWhy =
    "compiled out: this interprobe was built with -DINTERPROBE_WITH_NCCL=OFF; rebuild without it (no NCCL or CUDA "
    "needed at build time)";
}

bool nccl_compiled_in() { return false; }
int visible_gpu_count(std::string* why) {
  if (why) *why = kWhy;
  return 0;
}
std::unique_ptr<CollectiveBackend> make_nccl_backend(RankGroup&) { throw UnsupportedError(kWhy); }

}  // namespace interprobe::collective
