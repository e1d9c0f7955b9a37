#pragma once
// MPI for the collective probe: started once per process by `allreduce`, and by `run` when an
// MPI launcher started it among other ranks; ended when the command ends. MPI is called through interprobe-mpi.so (mpi_shim.hpp), the only object
// linked with libmpi, loaded by start_mpi(); without MPI in the build these throw
// UnsupportedError saying how to rebuild.
#include <memory>
#include <string>

#include "probes/collective/collective_backend.hpp"
#include "probes/collective/rank_group.hpp"

namespace interprobe::collective {

bool mpi_compiled_in();
// MPI_Init_thread on first call; MPI_COMM_WORLD as a group. Throws UnsupportedError when MPI
// is compiled out.
RankGroup& start_mpi();
bool mpi_started();
// Ends MPI. `peers_in_step`: every process reached the same point (ok, or an error they all
// agreed on), so MPI_Finalize; otherwise MPI_Abort(exit_code) so no peer waits for ever.
void finish_mpi(bool peers_in_step, int exit_code);
// The MPI library's own description (MPI_Get_library_version), first line.
std::string mpi_library_version();

// The MPI backend: MPI_Allreduce on host buffers, one rank per process. half and bfloat16
// are summed by a user-defined operation (MPI has no 16-bit float type before MPI 4.1).
std::unique_ptr<CollectiveBackend> make_mpi_backend(RankGroup& world);

}  // namespace interprobe::collective
