// Compiled when the build has no MPI: the MPI backend says how to get it.
#include "probes/collective/mpi_world.hpp"
#include "common/errors.hpp"

namespace interprobe::collective {

namespace {
constexpr const char* kWhy =
    "compiled out: the MPI backend needs MPI at build time; rebuild with -DINTERPROBE_WITH_MPI=ON "
    "(apt-get install libopenmpi-dev openmpi-bin)";
}

bool mpi_compiled_in() { return false; }
RankGroup& start_mpi() { throw UnsupportedError(kWhy); }
bool mpi_started() { return false; }
void finish_mpi(bool, int) {}
std::string mpi_library_version() { return "compiled out"; }
std::unique_ptr<CollectiveBackend> make_mpi_backend(RankGroup&) { throw UnsupportedError(kWhy); }

}  // namespace interprobe::collective
