#pragma once
// The C interface of interprobe-mpi.so, the only object that links MPI. interprobe opens it at
// run time, when `allreduce` (or `run` under an MPI launcher) starts MPI, so the binary starts
// (and every other command runs) on a machine without Open MPI; MpiWorld and the MPI backend call MPI through
// these pointers. Plain C types only: MPI's handles (MPI_COMM_WORLD, MPI_FLOAT) differ between
// Open MPI and MPICH and stay inside the module, built against the MPI found at configure time.
// Every int result is an MPI error code (MPI_SUCCESS is 0).
#include <cstdint>

extern "C" {

// in[i] + inout[i] -> inout[i] for `count` 16-bit floats (MPI has no 16-bit float before 4.1).
typedef void (*interprobe_mpi_sum16_fn)(const void* in, void* inout, int count);

struct interprobe_mpi_shim {
  int abi_version;  // kMpiShimAbi
  int (*init_funneled)(void);                      // MPI_Init_thread(FUNNELED) unless initialized
  int (*finalized)(int* flag);
  int (*finalize)(void);
  void (*abort_world)(int exit_code);              // MPI_Abort(MPI_COMM_WORLD)
  int (*world_rank_size)(int* rank, int* size);
  int (*node_rank_size)(int* rank, int* size);     // among processes sharing memory
  int (*barrier)(void);
  int (*bcast_bytes)(void* data, int bytes);       // from rank 0
  int (*bcast_u64)(std::uint64_t* value);
  int (*max_doubles)(double* values, int count);   // in place, over MPI_COMM_WORLD
  int (*sum_u64)(std::uint64_t* value);
  int (*sum_int)(int* value);
  int (*create_sum16_ops)(interprobe_mpi_sum16_fn half, interprobe_mpi_sum16_fn bfloat16);
  void (*free_sum16_ops)(void);                    // no-op after MPI_Finalize
  // dtype: 0 float32, 1 float16, 2 bfloat16; send nullptr: in place.
  int (*allreduce_sum)(const void* send, void* recv, int count, int dtype);
  void (*error_string)(int code, char* text, int capacity);
  void (*library_version)(char* text, int capacity);  // MPI_Get_library_version
  int (*sum_doubles)(double* values, int count);   // in place, over MPI_COMM_WORLD (ABI 2)
  // MPI_Bcast of one word from rank 0 that waits by polling with a sleep between tests, not by
  // spinning: a rank of `run` waits here while rank 0 probes alone (ABI 3).
  int (*bcast_u64_idle)(std::uint64_t* value, int poll_us);
  // The fleet report's gathering, waiting by polling like bcast_u64_idle (ABI 4):
  // every process's `value` into `all` (world size entries) on every process (MPI_Iallgather),
  int (*allgather_int_idle)(int value, int* all, int poll_us);
  // and every process's bytes to rank 0 at `displacements` (MPI_Igatherv; recv, counts and
  // displacements are read on rank 0 only).
  int (*gatherv_bytes_idle)(const void* send, int bytes, void* recv, const int* counts, const int* displacements,
                            int poll_us);
  // The other collectives of `collectives` (ABI 5); send nullptr: in place (MPI_IN_PLACE).
  int (*allgather_bytes)(const void* send, void* recv, int bytes_per_rank);
  // MPI_Reduce_scatter_block, `count` elements per rank; in place the input is recv (n blocks)
  // and the result lands at its start.
  int (*reduce_scatter_sum)(const void* send, void* recv, int count, int dtype);
  int (*alltoall_bytes)(const void* send, void* recv, int bytes_per_peer);
  int (*sendrecv_bytes)(const void* send, void* recv, int bytes, int dest, int source);
};

// The module's one exported symbol.
const interprobe_mpi_shim* interprobe_mpi_shim_v1(void);
}

namespace interprobe::collective {

inline constexpr int kMpiShimAbi = 5;
inline constexpr const char* kMpiShimSymbol = "interprobe_mpi_shim_v1";
inline constexpr const char* kMpiModuleFile = "interprobe-mpi.so";

// The module, loaded on first use from beside the executable (build tree) or from
// <prefix>/lib/interprobe (installed). Throws UnsupportedError naming what to install when it,
// or the MPI library it needs, cannot be loaded.
const interprobe_mpi_shim& mpi_shim();

}  // namespace interprobe::collective
