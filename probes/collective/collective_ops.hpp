#pragma once
// What each collective moves, as nccl-tests accounts for it (src/*.cu; docs/reference.md §14 and
// docs/collectives.md): the per-rank count behind a size, the buffers it needs, the bytes its algbw
// divides, its bus-bandwidth factor, and the data a checked call must leave in each rank's
// receive buffer. The sweep (allreduce_sweep.cpp) drives every op through these.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "probes/collective/dtype.hpp"
#include "model/collective.hpp"

namespace interprobe::collective {

using report::CollectiveOp;

// "all_gather,alltoall" (or "all") -> ops in the order given; InputError naming --ops.
std::vector<CollectiveOp> parse_op_list(std::string_view text);

// "all_gather,alltoall": the --ops text of a list (parse_op_list reads it back).
std::string op_list_text(const std::vector<CollectiveOp>& ops);

// nccl-tests' busbw factor: all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall (n-1)/n;
// broadcast, sendrecv 1.
double busbw_factor(CollectiveOp op, int ranks);
// Elements per rank (nccl-tests' count column) for a sweep size: the size is what algbw divides,
// n times the count for all_gather, reduce_scatter and alltoall. At least 1.
std::uint64_t op_count(CollectiveOp op, std::uint64_t size_bytes, Dtype dtype, int ranks);
// Bytes algbw divides for `count` elements per rank.
std::uint64_t algbw_bytes(CollectiveOp op, std::uint64_t count, Dtype dtype, int ranks);
// Elements of each rank's send and receive buffers for `count`.
std::uint64_t send_elements(CollectiveOp op, std::uint64_t count, int ranks);
std::uint64_t recv_elements(CollectiveOp op, std::uint64_t count, int ranks);
// In-place runs where nccl-tests checks it: alltoall and sendrecv in place overwrite what they
// still have to send, so they run out of place only.
bool has_in_place(CollectiveOp op);
// "sum" for reductions, "none" for collectives that only move data (nccl-tests' redop column).
const char* reduction_name(CollectiveOp op);
// Human name for progress lines and headings: "all-gather".
const char* display_name(CollectiveOp op);

// The data of one checked call of an op other than all_reduce (whose sums allreduce_sweep.hpp
// fills). `rank` is the global rank, `salt` changes per size and placement.
struct RankBuffers {
  std::vector<std::byte> send;      // what to write into the send buffer (empty: nothing)
  std::vector<std::byte> recv;      // what to write into the receive buffer: sentinel, or the in-place input
  std::vector<std::byte> expected;  // what the receive buffer must hold afterwards, from `expected_offset_elements`
  std::uint64_t expected_offset_elements = 0;
};
// `result_offset_elements`: where an in-place reduce_scatter leaves this rank's block (NCCL:
// rank x count; MPI_Reduce_scatter_block: 0).
RankBuffers op_buffers(CollectiveOp op, std::uint64_t count, Dtype dtype, int rank, int ranks, std::uint32_t salt,
                       bool in_place, std::uint64_t result_offset_elements);

}  // namespace interprobe::collective
