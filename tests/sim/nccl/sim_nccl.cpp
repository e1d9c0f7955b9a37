// A simulated libnccl.so.2 for tests (never installed): communicators over the simulated GPUs of
// tests/sim/cuda, either all in one process (ncclCommInitAll; the all-reduce is summed on the
// host when the group ends) or one rank per process (ncclGetUniqueId + ncclCommInitRank through
// shared memory: sim_nccl_process.hpp); timed by a ring model, NCCL's INFO log lines for
// transport capture, and an injectable hang for the watchdog. Settings: the "nccl" object of
// INTERPROBE_SIM_CONFIG's file.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim_nccl_common.hpp"
#include "sim_nccl_moves.hpp"
#include "sim_nccl_process.hpp"

using namespace sim_nccl;

namespace {

struct Clique;

struct Pending {
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  int type = kFloat32;
  void* stream = nullptr;
};

// A communicator handle: a rank of an in-process clique, or of a multi-process communicator.
struct Comm {
  std::shared_ptr<Clique> clique;
  int rank = 0, device = 0;
  std::shared_ptr<ProcessComm> process;
};

struct Clique {
  int ranks = 0;
  std::vector<Pending> pending;
  std::vector<bool> queued;
  std::mutex m;
  std::condition_variable cv;
  bool aborted = false;
  std::vector<Move> moves;  // this group's collectives other than all-reduce (sim_nccl_moves.hpp)
};

thread_local int group_depth = 0;
thread_local std::vector<std::shared_ptr<Clique>> group_cliques;

void block_until_abort(void* data) {
  auto* c = static_cast<Clique*>(data);
  std::unique_lock lock(c->m);
  c->cv.wait(lock, [&] { return c->aborted; });
}

// Every rank queued its part: reduce on the host, then hold for the ring model's time.
Result run(Clique& c) {
  auto sync = cuda_entry<int(void*)>("cuStreamSynchronize");
  auto host_func = cuda_entry<int(void*, void (*)(void*), void*)>("cuLaunchHostFunc");
  if (!sync || !host_func) return kUnhandledCudaError;
  if (settings().hang) {
    for (const auto& p : c.pending) host_func(p.stream, block_until_abort, &c);
    return kSuccess;
  }
  for (const auto& p : c.pending) sync(p.stream);
  const Pending& first = c.pending.front();
  std::vector<float> sum(first.count, 0.0f);
  for (const auto& p : c.pending) accumulate(sum.data(), p.send, p.type, p.count);
  for (const auto& p : c.pending) store_all(p.recv, p.type, sum.data(), p.count);
  double bytes = static_cast<double>(first.count * element_bytes(first.type));
  std::this_thread::sleep_for(std::chrono::duration<double>(ring_seconds(bytes, c.ranks)));
  log_info(Subsys::tuning, "AllReduce: " + std::to_string(static_cast<long long>(bytes)) + " Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}");
  return kSuccess;
}

}  // namespace

#define SIM_API extern "C" __attribute__((visibility("default")))

SIM_API const char* interprobe_sim_version() { return "interprobe-sim 1"; }
// A real libnccl carries "NCCL version X+cudaM.N" as a literal in its file; this one's comes from
// the description, so it tells interprobe directly.
SIM_API int interprobe_sim_nccl_cuda_major() { return settings().cuda_major; }

SIM_API Result ncclGetVersion(int* version) {
  *version = settings().version;
  return kSuccess;
}

SIM_API const char* ncclGetErrorString(Result rc) {
  switch (rc) {
    case kSuccess: return "no error";
    case kUnhandledCudaError: return "unhandled cuda error (simulated NCCL)";
    case kSystemError: return "unhandled system error (simulated NCCL; see its WARN line on stderr)";
    case kInternalError: return "internal error (simulated NCCL)";
    case kInvalidArgument: return "invalid argument (simulated NCCL)";
    case kInvalidUsage: return "invalid usage (simulated NCCL; see its WARN line on stderr)";
    case kRemoteError: return "remote process exited or there was a network error (simulated NCCL: a peer died, aborted or "
                              "missed nccl.peer_timeout_s)";
    default: return "unknown result (simulated NCCL)";
  }
}

SIM_API void ncclResetDebugInit() { reset_debug(); }

SIM_API Result ncclGetUniqueId(UniqueId* id) {
  if (!id) return kInvalidArgument;
  return make_unique_id(id);
}

// The id is passed by value, as nccl.h declares it (128 bytes on the stack).
SIM_API Result ncclCommInitRank(void** comm, int nranks, UniqueId id, int rank) {
  if (!comm) return kInvalidArgument;
  auto current_device = cuda_entry<int()>("interprobe_sim_current_device");
  const int device = current_device ? current_device() : -1;
  if (device < 0) {
    log_warn("ncclCommInitRank: no current CUDA context (cuCtxSetCurrent first)");
    return kUnhandledCudaError;
  }
  std::shared_ptr<ProcessComm> process;
  if (Result rc = ProcessComm::join(id, nranks, rank, device, &process); rc != kSuccess) return rc;
  *comm = new Comm{nullptr, rank, device, std::move(process)};
  return kSuccess;
}

// The device ncclCommInitAll leaves current, as NCCL's src/init.cc: cudaGetDevice(&oldDev) first
// (device 0 when the thread has no current context, as the runtime answers), cudaSetDevice(dev)
// for each rank's device, and cudaSetDevice(oldDev) at exit, which makes oldDev's primary context
// current (CUDA 12: cudaSetDevice initializes the primary context). Our code must not rely on it.
void set_runtime_device(int device) {
  auto retain = cuda_entry<int(void**, int)>("cuDevicePrimaryCtxRetain");
  auto set_current = cuda_entry<int(void*)>("cuCtxSetCurrent");
  void* ctx = nullptr;
  if (retain && set_current && retain(&ctx, device) == 0) set_current(ctx);
}

SIM_API Result ncclCommInitAll(void** comms, int ndev, const int* devices) {
  if (ndev < 1 || !comms) return kInvalidArgument;
  auto current_device = cuda_entry<int()>("interprobe_sim_current_device");
  const int old_device = std::max(0, current_device ? current_device() : -1);
  for (int r = 0; r < ndev; ++r) set_runtime_device(devices ? devices[r] : r);
  auto clique = std::make_shared<Clique>();
  clique->ranks = ndev;
  clique->pending.resize(static_cast<std::size_t>(ndev));
  clique->queued.assign(static_cast<std::size_t>(ndev), false);
  log_info(Subsys::init, version_line());
  for (int r = 0; r < ndev; ++r) {
    comms[r] = new Comm{clique, r, devices ? devices[r] : r, nullptr};
    if (ndev > 1)
      log_info(Subsys::init, "Channel 00/0 : " + std::to_string(r) + "[" + std::to_string(r) + "] -> " + std::to_string((r + 1) % ndev) + "[" +
               std::to_string((r + 1) % ndev) + "] via " + transport());
  }
  set_runtime_device(old_device);
  return kSuccess;
}

SIM_API Result ncclCommDestroy(void* comm) {
  delete static_cast<Comm*>(comm);
  return kSuccess;
}

SIM_API Result ncclCommAbort(void* comm) {
  auto* c = static_cast<Comm*>(comm);
  if (!c) return kInvalidArgument;
  if (c->process) {
    c->process->abort();
  } else {
    {
      std::lock_guard lock(c->clique->m);
      c->clique->aborted = true;
    }
    c->clique->cv.notify_all();
  }
  delete c;
  return kSuccess;
}

SIM_API Result ncclCommGetAsyncError(void* comm, Result* async) {
  auto* c = static_cast<Comm*>(comm);
  if (!c || !async) return kInvalidArgument;
  *async = c->process ? c->process->async_error() : kSuccess;
  return kSuccess;
}

SIM_API Result ncclGroupStart() {
  ++group_depth;
  return kSuccess;
}

SIM_API Result ncclGroupEnd() {
  if (group_depth == 0) return kInvalidUsage;
  if (--group_depth > 0) return kSuccess;
  Result rc = kSuccess;
  for (auto& clique : group_cliques) {
    if (!clique->moves.empty()) {
      rc = run_moves(clique->moves, clique->ranks);
      clique->moves.clear();
      continue;
    }
    if (std::all_of(clique->queued.begin(), clique->queued.end(), [](bool q) { return q; })) rc = run(*clique);
    else rc = kInvalidUsage;  // a rank missing: real NCCL would hang; say so instead
    std::fill(clique->queued.begin(), clique->queued.end(), false);
  }
  group_cliques.clear();
  return rc;
}

SIM_API Result ncclAllReduce(const void* send, void* recv, std::size_t count, int type, int op, void* comm, void* stream) {
  auto* c = static_cast<Comm*>(comm);
  if (!c || op != kSum || !supported_type(type)) return kInvalidArgument;
  // One rank per process: queued on its stream at once, group or not (its peers are elsewhere).
  if (c->process) return c->process->all_reduce(send, recv, count, type, stream);
  auto& clique = c->clique;
  clique->pending[static_cast<std::size_t>(c->rank)] = Pending{send, recv, count, type, stream};
  clique->queued[static_cast<std::size_t>(c->rank)] = true;
  if (std::find(group_cliques.begin(), group_cliques.end(), clique) == group_cliques.end()) group_cliques.push_back(clique);
  if (group_depth == 0) {  // outside a group: only a one-rank communicator can complete
    ncclGroupStart();
    return ncclGroupEnd();
  }
  return kSuccess;
}

namespace {

// Queues one move of an in-process clique; a lone call outside a group runs at once.
Result queue_move(void* comm, Move move) {
  auto* c = static_cast<Comm*>(comm);
  if (!c || !supported_type(move.type)) return kInvalidArgument;
  if (c->process) {
    log_warn("simulated NCCL: collectives other than all-reduce are simulated for ncclCommInitAll communicators only");
    return kInvalidUsage;
  }
  move.rank = c->rank;
  c->clique->moves.push_back(move);
  if (std::find(group_cliques.begin(), group_cliques.end(), c->clique) == group_cliques.end()) group_cliques.push_back(c->clique);
  if (group_depth == 0) {
    ncclGroupStart();
    return ncclGroupEnd();
  }
  return kSuccess;
}

}  // namespace

SIM_API Result ncclAllGather(const void* send, void* recv, std::size_t count, int type, void* comm, void* stream) {
  return queue_move(comm, Move{Move::Kind::all_gather, 0, send, recv, count, type, 0, stream});
}

SIM_API Result ncclReduceScatter(const void* send, void* recv, std::size_t count, int type, int op, void* comm, void* stream) {
  if (op != kSum) return kInvalidArgument;
  return queue_move(comm, Move{Move::Kind::reduce_scatter, 0, send, recv, count, type, 0, stream});
}

SIM_API Result ncclBroadcast(const void* send, void* recv, std::size_t count, int type, int root, void* comm, void* stream) {
  return queue_move(comm, Move{Move::Kind::broadcast, 0, send, recv, count, type, root, stream});
}

SIM_API Result ncclSend(const void* send, std::size_t count, int type, int peer, void* comm, void* stream) {
  return queue_move(comm, Move{Move::Kind::send, 0, send, nullptr, count, type, peer, stream});
}

SIM_API Result ncclRecv(void* recv, std::size_t count, int type, int peer, void* comm, void* stream) {
  return queue_move(comm, Move{Move::Kind::recv, 0, nullptr, recv, count, type, peer, stream});
}
