#include "cli/features.hpp"

#include "interprobe/build_config.hpp"

namespace interprobe::cli {

// cuda: the CUDA copy engine, always built now (driver API opened at run time, no toolkit).
report::CompiledFeatures compiled_features() {
  return {.cuda = true,
          .nccl = INTERPROBE_HAVE_NCCL != 0,
          .nvml = INTERPROBE_HAVE_NVML != 0,
          .hwloc = INTERPROBE_HAVE_HWLOC != 0,
          .libpci = INTERPROBE_HAVE_LIBPCI != 0,
          .mpi = INTERPROBE_HAVE_MPI != 0};
}

const char* interprobe_version() { return INTERPROBE_VERSION; }

}  // namespace interprobe::cli
