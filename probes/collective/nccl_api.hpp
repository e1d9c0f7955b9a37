#pragma once
// The part of NCCL's API interprobe calls, declared from its public, stable ABI (NCCL 2.x) so
// that nothing needs nccl.h (or the CUDA headers it includes): the NCCL backend builds on every
// machine and opens libnccl.so.2 at run time. tests/unit/gpu/nccl_abi_test.cpp checks it against
// the real nccl.h wherever that is installed.
#include <cstddef>

#include "probes/gpu/cuda_driver_api.hpp"

struct ncclComm;  // NCCL's opaque communicator keeps its name, as in nccl.h

namespace interprobe::nccl {

using Result = int;  // ncclResult_t
using Comm = ::ncclComm*;
struct UniqueId {
  char internal[128];  // NCCL_UNIQUE_ID_BYTES
};

inline constexpr Result kSuccess = 0;
inline constexpr Result kInProgress = 7;
inline constexpr int kFloat16 = 6;   // ncclFloat16
inline constexpr int kFloat32 = 7;   // ncclFloat32
inline constexpr int kBfloat16 = 9;  // ncclBfloat16
inline constexpr int kSum = 0;       // ncclSum

using GetVersionFn = Result(int*);
using GetErrorStringFn = const char*(Result);
using GetUniqueIdFn = Result(UniqueId*);
using CommInitAllFn = Result(Comm*, int, const int*);
using CommInitRankFn = Result(Comm*, int, UniqueId, int);
using CommDestroyFn = Result(Comm);
using CommAbortFn = Result(Comm);
using CommGetAsyncErrorFn = Result(Comm, Result*);
// The stream is the CUDA runtime's cudaStream_t, the same handle as the driver's CUstream.
using AllReduceFn = Result(const void*, void*, std::size_t, int, int, Comm, cu::Stream);
// The other collectives (nccl.h since 2.0; send/recv since 2.7). AllGather's count is per rank
// (sent), ReduceScatter's per rank (received); Broadcast from `root`.
using AllGatherFn = Result(const void*, void*, std::size_t, int, Comm, cu::Stream);
using ReduceScatterFn = Result(const void*, void*, std::size_t, int, int, Comm, cu::Stream);
using BroadcastFn = Result(const void*, void*, std::size_t, int, int, Comm, cu::Stream);
using SendFn = Result(const void*, std::size_t, int, int, Comm, cu::Stream);
using RecvFn = Result(void*, std::size_t, int, int, Comm, cu::Stream);
using GroupStartFn = Result();
using GroupEndFn = Result();
// NCCL 2.24.3+: re-reads NCCL_DEBUG* from the environment (it is read once per process otherwise).
using ResetDebugInitFn = void();

}  // namespace interprobe::nccl
