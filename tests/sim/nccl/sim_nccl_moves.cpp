#include "sim_nccl_moves.hpp"

#include <chrono>
#include <cstring>
#include <map>
#include <thread>
#include <utility>

namespace sim_nccl {

namespace {

using Kind = Move::Kind;

// The model for collectives other than all-reduce: latency + bus bytes / bus bandwidth, where
// bus bytes are what nccl-tests' busbw counts: (n-1)/n x n x count for all-gather and
// reduce-scatter, count for broadcast, the largest rank's sent bytes for send/recv.
void hold(double bus_bytes) {
  const double seconds = settings().latency_us * 1e-6 + bus_bytes / (settings().bus_gbps * 1e9);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

Result invalid(const std::string& why) {
  log_warn(why);
  return kInvalidUsage;
}

const char* byte_at(const void* base, std::size_t elements, int type) {
  return static_cast<const char*>(base) + elements * element_bytes(type);
}

}  // namespace

Result run_moves(const std::vector<Move>& moves, int ranks) {
  auto sync = cuda_entry<int(void*)>("cuStreamSynchronize");
  if (!sync) return kUnhandledCudaError;
  for (const auto& m : moves) {
    sync(m.stream);
    if (!supported_type(m.type)) return kInvalidArgument;
  }
  const Kind kind = moves.front().kind;
  const std::size_t width = element_bytes(moves.front().type);
  const std::size_t n = static_cast<std::size_t>(ranks);
  if (kind == Kind::send || kind == Kind::recv) {
    // Each receive takes the next send from its peer to it, in the order they were queued.
    std::map<std::pair<int, int>, std::vector<std::vector<char>>> in_flight;  // (from, to) -> payloads
    std::map<std::pair<int, int>, std::size_t> taken;
    std::vector<double> sent_bytes(n, 0.0);
    for (const auto& m : moves) {
      if (m.kind == Kind::send) {
        const char* from = static_cast<const char*>(m.send);
        in_flight[{m.rank, m.peer}].emplace_back(from, from + m.count * element_bytes(m.type));
        if (m.peer != m.rank) sent_bytes[static_cast<std::size_t>(m.rank)] += static_cast<double>(m.count * element_bytes(m.type));
      } else if (m.kind != Kind::recv) {
        return invalid("simulated NCCL: a collective and send/recv in one group are not simulated");
      }
    }
    for (const auto& m : moves) {
      if (m.kind != Kind::recv) continue;
      auto& queue = in_flight[{m.peer, m.rank}];
      std::size_t& next = taken[{m.peer, m.rank}];
      if (next >= queue.size()) return invalid("simulated NCCL: ncclRecv without a matching ncclSend (real NCCL would hang)");
      const auto& payload = queue[next++];
      if (payload.size() != m.count * element_bytes(m.type)) return invalid("simulated NCCL: ncclSend and ncclRecv sizes differ");
      std::memcpy(m.recv, payload.data(), payload.size());
    }
    for (const auto& [key, queue] : in_flight)
      if (taken[key] != queue.size()) return invalid("simulated NCCL: ncclSend without a matching ncclRecv (real NCCL would hang)");
    double most = 0;
    for (double b : sent_bytes) most = std::max(most, b);
    hold(most);
    return kSuccess;
  }
  std::vector<const Move*> of_rank(n, nullptr);
  for (const auto& m : moves) {
    if (m.kind != kind || m.rank < 0 || static_cast<std::size_t>(m.rank) >= n || of_rank[static_cast<std::size_t>(m.rank)])
      return invalid("simulated NCCL: one collective per rank per group is simulated");
    of_rank[static_cast<std::size_t>(m.rank)] = &m;
  }
  for (const auto* m : of_rank)
    if (!m) return invalid("simulated NCCL: a rank is missing from the collective (real NCCL would hang)");
  const std::size_t count = of_rank[0]->count;
  const int type = of_rank[0]->type;
  switch (kind) {
    case Kind::all_gather: {
      std::vector<char> gathered(n * count * width);  // every send first: in place they lie inside the receive buffers
      for (std::size_t j = 0; j < n; ++j) std::memcpy(gathered.data() + j * count * width, of_rank[j]->send, count * width);
      for (const auto* m : of_rank) std::memcpy(m->recv, gathered.data(), gathered.size());
      hold(static_cast<double>(n - 1) * static_cast<double>(count * width));
      break;
    }
    case Kind::reduce_scatter: {
      std::vector<std::vector<float>> sums(n, std::vector<float>(count, 0.0f));
      for (std::size_t r = 0; r < n; ++r)
        for (const auto* m : of_rank) accumulate(sums[r].data(), byte_at(m->send, r * count, type), type, count);
      for (std::size_t r = 0; r < n; ++r) store_all(of_rank[r]->recv, type, sums[r].data(), count);
      hold(static_cast<double>(n - 1) * static_cast<double>(count * width));
      break;
    }
    case Kind::broadcast: {
      const int root = of_rank[0]->peer;
      if (root < 0 || static_cast<std::size_t>(root) >= n) return kInvalidArgument;
      const char* from = static_cast<const char*>(of_rank[static_cast<std::size_t>(root)]->send);
      std::vector<char> data(from, from + count * width);
      for (const auto* m : of_rank) std::memcpy(m->recv, data.data(), data.size());
      hold(static_cast<double>(count * width));
      break;
    }
    case Kind::send:
    case Kind::recv: break;
  }
  return kSuccess;
}

}  // namespace sim_nccl
