#pragma once
// The simulated collectives beside all-reduce, for communicators of one process: all-gather,
// reduce-scatter, broadcast, and send/recv (which alltoall and sendrecv are built from, as
// nccl-tests does). Each call of a group is queued as a Move; when the group ends they run on the
// host in the simulated GPUs' memory, then hold for the model's time.
#include <cstddef>
#include <vector>

#include "sim_nccl_common.hpp"

namespace sim_nccl {

struct Move {
  enum class Kind { all_gather, reduce_scatter, broadcast, send, recv } kind;
  int rank = 0;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  // all-gather: sent per rank; reduce-scatter: received per rank
  int type = kFloat32;
  int peer = 0;  // send/recv: the other rank; broadcast: the root
  void* stream = nullptr;
};

// Runs one group's moves over `ranks` ranks. kInvalidUsage (with a WARN line) when a collective
// misses a rank or a send has no matching receive: real NCCL would hang.
Result run_moves(const std::vector<Move>& moves, int ranks);

}  // namespace sim_nccl
