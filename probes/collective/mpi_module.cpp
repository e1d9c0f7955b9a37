// interprobe-mpi.so: MPI behind the C interface of mpi_shim.hpp. The only source that includes
// mpi.h and the only object linked with libmpi; it uses nothing else of interprobe.
#include <mpi.h>

#include <time.h>

#include <algorithm>

#include "probes/collective/mpi_shim.hpp"

namespace {

interprobe_mpi_sum16_fn half_sum_fn = nullptr, bfloat16_sum_fn = nullptr;
MPI_Op half_sum = MPI_OP_NULL, bfloat16_sum = MPI_OP_NULL;

void half_trampoline(void* in, void* inout, int* length, MPI_Datatype*) { half_sum_fn(in, inout, *length); }
void bfloat16_trampoline(void* in, void* inout, int* length, MPI_Datatype*) { bfloat16_sum_fn(in, inout, *length); }

int init_funneled() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return MPI_SUCCESS;
  int provided = 0;
  // One thread calls MPI; FUNNELED is what every MPI offers.
  return MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
}

int finalized(int* flag) { return MPI_Finalized(flag); }
int finalize() { return MPI_Finalize(); }
void abort_world(int exit_code) { MPI_Abort(MPI_COMM_WORLD, exit_code); }

int world_rank_size(int* rank, int* size) {
  int rc = MPI_Comm_rank(MPI_COMM_WORLD, rank);
  return rc == MPI_SUCCESS ? MPI_Comm_size(MPI_COMM_WORLD, size) : rc;
}

int node_rank_size(int* rank, int* size) {
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm node = MPI_COMM_NULL;
  int rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node);
  if (rc != MPI_SUCCESS) return rc;
  rc = MPI_Comm_rank(node, rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(node, size);
  MPI_Comm_free(&node);
  return rc;
}

int barrier() { return MPI_Barrier(MPI_COMM_WORLD); }
int bcast_bytes(void* data, int bytes) { return MPI_Bcast(data, bytes, MPI_BYTE, 0, MPI_COMM_WORLD); }
int bcast_u64(std::uint64_t* value) { return MPI_Bcast(value, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD); }
int max_doubles(double* values, int count) { return MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); }
int sum_doubles(double* values, int count) { return MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); }
int sum_u64(std::uint64_t* value) { return MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD); }
int sum_int(int* value) { return MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); }

// Open MPI's blocking collectives busy-poll: a rank waiting seconds for rank 0 would take a
// core from the bandwidth and compute probes rank 0 is timing meanwhile.
int wait_idle(int rc, MPI_Request& request, int poll_us) {
  const timespec pause{0, static_cast<long>(poll_us) * 1000};
  for (int done = 0; rc == MPI_SUCCESS;) {
    rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) break;
    nanosleep(&pause, nullptr);
  }
  return rc;
}

int bcast_u64_idle(std::uint64_t* value, int poll_us) {
  MPI_Request request = MPI_REQUEST_NULL;
  return wait_idle(MPI_Ibcast(value, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &request), request, poll_us);
}

int allgather_int_idle(int value, int* all, int poll_us) {
  MPI_Request request = MPI_REQUEST_NULL;
  return wait_idle(MPI_Iallgather(&value, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, &request), request, poll_us);
}

int gatherv_bytes_idle(const void* send, int bytes, void* recv, const int* counts, const int* displacements, int poll_us) {
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_Igatherv(send, bytes, MPI_BYTE, recv, counts, displacements, MPI_BYTE, 0, MPI_COMM_WORLD, &request);
  return wait_idle(rc, request, poll_us);
}

int create_sum16_ops(interprobe_mpi_sum16_fn half, interprobe_mpi_sum16_fn bfloat16) {
  half_sum_fn = half;
  bfloat16_sum_fn = bfloat16;
  if (half_sum == MPI_OP_NULL)
    if (int rc = MPI_Op_create(&half_trampoline, 1, &half_sum); rc != MPI_SUCCESS) return rc;
  if (bfloat16_sum == MPI_OP_NULL) return MPI_Op_create(&bfloat16_trampoline, 1, &bfloat16_sum);
  return MPI_SUCCESS;
}

void free_sum16_ops() {
  int done = 0;
  MPI_Finalized(&done);
  if (done) return;
  if (half_sum != MPI_OP_NULL) MPI_Op_free(&half_sum);
  if (bfloat16_sum != MPI_OP_NULL) MPI_Op_free(&bfloat16_sum);
}

MPI_Datatype sum_type(int dtype) { return dtype == 0 ? MPI_FLOAT : MPI_UINT16_T; }
MPI_Op sum_op(int dtype) { return dtype == 0 ? MPI_SUM : (dtype == 1 ? half_sum : bfloat16_sum); }

int allreduce_sum(const void* send, void* recv, int count, int dtype) {
  return MPI_Allreduce(send ? send : MPI_IN_PLACE, recv, count, sum_type(dtype), sum_op(dtype), MPI_COMM_WORLD);
}

int allgather_bytes(const void* send, void* recv, int bytes_per_rank) {
  if (!send) return MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, bytes_per_rank, MPI_BYTE, MPI_COMM_WORLD);
  return MPI_Allgather(send, bytes_per_rank, MPI_BYTE, recv, bytes_per_rank, MPI_BYTE, MPI_COMM_WORLD);
}

int reduce_scatter_sum(const void* send, void* recv, int count, int dtype) {
  return MPI_Reduce_scatter_block(send ? send : MPI_IN_PLACE, recv, count, sum_type(dtype), sum_op(dtype), MPI_COMM_WORLD);
}

int alltoall_bytes(const void* send, void* recv, int bytes_per_peer) {
  return MPI_Alltoall(send, bytes_per_peer, MPI_BYTE, recv, bytes_per_peer, MPI_BYTE, MPI_COMM_WORLD);
}

int sendrecv_bytes(const void* send, void* recv, int bytes, int dest, int source) {
  return MPI_Sendrecv(send, bytes, MPI_BYTE, dest, 0, recv, bytes, MPI_BYTE, source, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

void error_string(int code, char* text, int capacity) {
  char buffer[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, buffer, &length);
  int n = std::clamp(length, 0, capacity - 1);
  std::copy(buffer, buffer + n, text);
  text[n] = '\0';
}

void library_version(char* text, int capacity) {
  char buffer[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(buffer, &length) != MPI_SUCCESS) length = 0;
  int n = std::clamp(length, 0, capacity - 1);
  std::copy(buffer, buffer + n, text);
  text[n] = '\0';
}

const interprobe_mpi_shim shim = {
    interprobe::collective::kMpiShimAbi, init_funneled, finalized, finalize, abort_world, world_rank_size,
    node_rank_size, barrier, bcast_bytes, bcast_u64, max_doubles, sum_u64, sum_int, create_sum16_ops,
    free_sum16_ops, allreduce_sum, error_string, library_version, sum_doubles, bcast_u64_idle,
    allgather_int_idle, gatherv_bytes_idle, allgather_bytes, reduce_scatter_sum, alltoall_bytes, sendrecv_bytes};

}  // namespace

extern "C" __attribute__((visibility("default"))) const interprobe_mpi_shim* interprobe_mpi_shim_v1(void) {
  return &shim;
}
