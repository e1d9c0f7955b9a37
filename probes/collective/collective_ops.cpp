#include "probes/collective/collective_ops.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/text.hpp"
#include "probes/collective/allreduce_sweep.hpp"

namespace interprobe::collective {

namespace {

bool spans_ranks(CollectiveOp op) {
  return op == CollectiveOp::all_gather || op == CollectiveOp::reduce_scatter || op == CollectiveOp::alltoall;
}

// Rank `rank`'s data for collectives that only move it: values 0..255 (exact in every type),
// different per rank, element and salt, so a block from the wrong rank or offset does not pass.
std::vector<std::byte> rank_data(std::uint64_t elements, Dtype dtype, int rank, std::uint32_t salt) {
  std::vector<std::byte> out(elements * element_bytes(dtype));
  fill_input(out.data(), elements, dtype, 0, 1, salt + 131u * static_cast<std::uint32_t>(rank));
  return out;
}

std::vector<std::byte> sentinel(std::uint64_t elements, Dtype dtype) {
  std::vector<std::byte> out(elements * element_bytes(dtype));
  fill_sentinel(out.data(), out.size());
  return out;
}

std::vector<std::byte> slice(const std::vector<std::byte>& from, std::uint64_t first, std::uint64_t elements, Dtype dtype) {
  const std::size_t width = element_bytes(dtype);
  return {from.begin() + static_cast<std::ptrdiff_t>(first * width),
          from.begin() + static_cast<std::ptrdiff_t>((first + elements) * width)};
}

void put(std::vector<std::byte>& into, std::uint64_t first, const std::vector<std::byte>& block, Dtype dtype) {
  std::memcpy(into.data() + first * element_bytes(dtype), block.data(), block.size());
}

}  // namespace

std::vector<CollectiveOp> parse_op_list(std::string_view text) {
  std::vector<CollectiveOp> ops;
  for (const auto& item : split(std::string(text), ',')) {
    if (item == "all") {
      for (auto op : {CollectiveOp::all_reduce, CollectiveOp::all_gather, CollectiveOp::reduce_scatter, CollectiveOp::alltoall,
                      CollectiveOp::broadcast, CollectiveOp::sendrecv})
        if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
      continue;
    }
    auto op = report::parse_enum<CollectiveOp>(item);
    if (!op)
      throw InputError(fmt::format("--ops '{}': unknown collective; use all_reduce, all_gather, reduce_scatter, alltoall, "
                                   "broadcast, sendrecv or all, comma-separated",
                                   printable(item)));
    if (std::find(ops.begin(), ops.end(), *op) == ops.end()) ops.push_back(*op);
  }
  if (ops.empty()) throw InputError("--ops: empty; name at least one collective");
  return ops;
}

std::string op_list_text(const std::vector<CollectiveOp>& ops) {
  std::string text;
  for (auto op : ops) text += (text.empty() ? "" : ",") + std::string(to_string(op));
  return text;
}

double busbw_factor(CollectiveOp op, int ranks) {
  if (ranks <= 0) return 0;
  switch (op) {
    case CollectiveOp::all_reduce: return busbw_factor(ranks);
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::alltoall: return static_cast<double>(ranks - 1) / ranks;
    case CollectiveOp::broadcast:
    case CollectiveOp::sendrecv: return 1;
  }
  return 0;
}

std::uint64_t op_count(CollectiveOp op, std::uint64_t size_bytes, Dtype dtype, int ranks) {
  const std::uint64_t per = element_bytes(dtype) * (spans_ranks(op) ? static_cast<std::uint64_t>(std::max(ranks, 1)) : 1);
  return std::max<std::uint64_t>(1, size_bytes / per);
}

std::uint64_t algbw_bytes(CollectiveOp op, std::uint64_t count, Dtype dtype, int ranks) {
  return count * element_bytes(dtype) * (spans_ranks(op) ? static_cast<std::uint64_t>(std::max(ranks, 1)) : 1);
}

std::uint64_t send_elements(CollectiveOp op, std::uint64_t count, int ranks) {
  const bool whole = op == CollectiveOp::reduce_scatter || op == CollectiveOp::alltoall;
  return count * (whole ? static_cast<std::uint64_t>(ranks) : 1);
}

std::uint64_t recv_elements(CollectiveOp op, std::uint64_t count, int ranks) {
  // In place, reduce_scatter's input is the receive buffer: n blocks.
  const bool whole = op == CollectiveOp::all_gather || op == CollectiveOp::alltoall || op == CollectiveOp::reduce_scatter;
  return count * (whole ? static_cast<std::uint64_t>(ranks) : 1);
}

bool has_in_place(CollectiveOp op) { return op != CollectiveOp::alltoall && op != CollectiveOp::sendrecv; }

const char* reduction_name(CollectiveOp op) {
  return op == CollectiveOp::all_reduce || op == CollectiveOp::reduce_scatter ? "sum" : "none";
}

const char* display_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce: return "all-reduce";
    case CollectiveOp::all_gather: return "all-gather";
    case CollectiveOp::reduce_scatter: return "reduce-scatter";
    case CollectiveOp::alltoall: return "all-to-all";
    case CollectiveOp::broadcast: return "broadcast";
    case CollectiveOp::sendrecv: return "send/recv";
  }
  return "collective";
}

RankBuffers op_buffers(CollectiveOp op, std::uint64_t count, Dtype dtype, int rank, int ranks, std::uint32_t salt,
                       bool in_place, std::uint64_t result_offset_elements) {
  RankBuffers b;
  const auto n = static_cast<std::uint64_t>(ranks);
  const auto r = static_cast<std::uint64_t>(rank);
  switch (op) {
    case CollectiveOp::all_reduce:
      throw std::logic_error("op_buffers: all_reduce fills its own buffers (allreduce_sweep.hpp)");
    case CollectiveOp::all_gather: {
      b.recv = sentinel(n * count, dtype);
      if (in_place) put(b.recv, r * count, rank_data(count, dtype, rank, salt), dtype);
      else b.send = rank_data(count, dtype, rank, salt);
      b.expected.resize(n * count * element_bytes(dtype));
      for (int j = 0; j < ranks; ++j) put(b.expected, static_cast<std::uint64_t>(j) * count, rank_data(count, dtype, j, salt), dtype);
      break;
    }
    case CollectiveOp::reduce_scatter: {
      std::vector<std::byte> input(n * count * element_bytes(dtype)), sums(input.size());
      fill_input(input.data(), n * count, dtype, rank, ranks, salt);
      fill_expected(sums.data(), n * count, dtype, ranks, salt);
      if (in_place) {
        b.recv = std::move(input);
        b.expected_offset_elements = result_offset_elements;
      } else {
        b.send = std::move(input);
        b.recv = sentinel(count, dtype);
      }
      b.expected = slice(sums, r * count, count, dtype);
      break;
    }
    case CollectiveOp::alltoall: {
      b.send = rank_data(n * count, dtype, rank, salt);
      b.recv = sentinel(n * count, dtype);
      b.expected.resize(b.send.size());
      for (int j = 0; j < ranks; ++j)  // block j came from rank j: its block r
        put(b.expected, static_cast<std::uint64_t>(j) * count, slice(rank_data(n * count, dtype, j, salt), r * count, count, dtype), dtype);
      break;
    }
    case CollectiveOp::broadcast: {  // root 0, as nccl-tests' default -r 0
      b.expected = rank_data(count, dtype, 0, salt);
      b.recv = in_place && rank == 0 ? b.expected : sentinel(count, dtype);
      if (!in_place && rank == 0) b.send = b.expected;
      break;
    }
    case CollectiveOp::sendrecv: {  // to rank+1, from rank-1
      b.send = rank_data(count, dtype, rank, salt);
      b.recv = sentinel(count, dtype);
      b.expected = rank_data(count, dtype, (rank + ranks - 1) % ranks, salt);
      break;
    }
  }
  return b;
}

}  // namespace interprobe::collective
