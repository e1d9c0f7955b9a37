#pragma once
// Multi-process communicators of the simulated libnccl (ncclGetUniqueId, ncclCommInitRank): the
// unique id names a POSIX shared-memory segment that the ranks of one node join; each all-reduce
// runs on the caller's stream (as NCCL's kernel does), copies this rank's data into its slot of
// the segment chunk by chunk, waits for the others at a barrier, and sums every slot on the host.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "sim_nccl_common.hpp"

namespace sim_nccl {

inline constexpr std::size_t kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
struct UniqueId {
  char internal[kUniqueIdBytes];
};

// A fresh id: a segment name no other run can pick (user, pid, 64 random bits).
Result make_unique_id(UniqueId* id);

struct SharedHeader;

class ProcessComm : public std::enable_shared_from_this<ProcessComm> {
 public:
  // Joins the rendezvous of `id` as `rank` of `nranks` on simulated `device`; waits (bounded by
  // peer_timeout_s) until every rank joined, then removes the segment's name.
  static Result join(const UniqueId& id, int nranks, int rank, int device, std::shared_ptr<ProcessComm>* out);
  ~ProcessComm();
  ProcessComm(const ProcessComm&) = delete;
  ProcessComm& operator=(const ProcessComm&) = delete;

  // Queues the all-reduce on `stream`; an earlier asynchronous error is returned instead.
  Result all_reduce(const void* send, void* recv, std::size_t count, int type, void* stream);
  Result async_error() const { return async_error_.load(); }
  // ncclCommAbort: releases this rank's waiting work and tells the peers (their collectives fail).
  void abort();
  int rank() const { return rank_; }

 private:
  struct Job;
  ProcessComm() = default;
  static void run_job(void* job);
  void execute(const Job& job);
  Result exchange(const Job& job);
  Result barrier();
  void fail(Result rc, const std::string& why);
  void wait_for_local_abort(double limit_s);
  Result wait_for_every_rank();
  void log_connection() const;

  std::string name_;
  SharedHeader* header_ = nullptr;
  std::byte* slots_ = nullptr;
  std::size_t mapped_bytes_ = 0;
  int nranks_ = 0, rank_ = 0, device_ = 0;
  std::uint64_t sequence_ = 0;  // collectives run so far (only the stream's worker touches it)
  std::atomic<Result> async_error_{kSuccess};
  std::mutex m_;
  std::condition_variable cv_;
  bool aborted_ = false;  // by this process (ncclCommAbort)
};

}  // namespace sim_nccl
