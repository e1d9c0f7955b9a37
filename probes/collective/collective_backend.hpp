#pragma once
// The seam of design.md ("collective backend"): an all-reduce sweep drives any backend through
// this interface, so the sweep, the result check and the reports are tested with test doubles,
// and the MPI backend runs the whole pipeline on hosts without a GPU.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "probes/collective/dtype.hpp"
#include "probes/collective/rank_group.hpp"

namespace interprobe::collective {

using Clock = std::chrono::steady_clock;

// A collective did not finish before its deadline; the backend has already aborted it (its
// communicator is unusable afterwards).
class CollectiveHang : public std::runtime_error {
 public:
  CollectiveHang(std::uint64_t bytes, double waited_s, const std::string& detail);
  std::uint64_t bytes() const { return bytes_; }
  double waited_s() const { return waited_s_; }

 private:
  std::uint64_t bytes_;
  double waited_s_;
};

enum class BufferRole { send, recv };

class CollectiveBackend {
 public:
  virtual ~CollectiveBackend() = default;
  virtual report::AllreduceBackend kind() const = 0;  // what the report calls it
  virtual int ranks() const = 0;         // ranks of the collective (GPUs for NCCL, processes for MPI)
  virtual int rank() const = 0;          // the first rank this process drives
  virtual int local_ranks() const { return 1; }  // ranks this process drives (NCCL in one process: every GPU)
  virtual std::string library_version() const = 0;
  virtual std::vector<std::string> devices() const { return {}; }
  RankGroup& group() const { return *group_; }

  // Two buffers (send, recv) of `bytes` per local rank; replaces earlier ones.
  virtual void allocate(std::size_t bytes) = 0;
  virtual void write(BufferRole role, int local_rank, const std::byte* host, std::size_t bytes) = 0;
  virtual void read(BufferRole role, int local_rank, std::byte* host, std::size_t bytes) = 0;
  // Starts a sum all-reduce of `count` elements on every local rank: send -> recv, or recv in place.
  // A backend may return before it completes; synchronize() waits.
  virtual void allreduce(std::size_t count, Dtype dtype, bool in_place) = 0;
  // Starts `op` with `count` elements per rank (nccl-tests' count column; buffers per
  // collective_ops.hpp; in place: the receive buffer only). all_reduce calls allreduce(); a
  // backend without the others throws UnsupportedError.
  virtual void start(report::CollectiveOp op, std::size_t count, Dtype dtype, bool in_place);
  // Where an in-place reduce_scatter leaves local rank `local`'s block, in elements (NCCL:
  // rank x count).
  virtual std::size_t in_place_result_offset(std::size_t count, int local) const {
    return static_cast<std::size_t>(rank() + local) * count;
  }
  // Waits for every started all-reduce. Past `deadline` it aborts them and throws CollectiveHang.
  virtual void synchronize(Clock::time_point deadline, std::uint64_t bytes) = 0;
  // The library's per-call log on (untimed passes, which record what it chose) or off (timed
  // iterations: a log line per call is file I/O inside the time).
  virtual void log_choices(bool on) { (void)on; }
  // What the sweep's record should say about how this backend ran (logging, fallbacks).
  virtual std::vector<std::string> notes() const { return {}; }

  // The check of results: elements of every local rank's recv buffer that differ from
  // `expected`, `count` elements (bitwise: the values are exact sums). Backends may override it to compare on
  // the device; this default reads each recv buffer back.
  virtual std::uint64_t count_wrong(const std::byte* expected, std::size_t count, Dtype dtype);

 protected:
  explicit CollectiveBackend(RankGroup& group) : group_(&group) {}

 private:
  RankGroup* group_;
};

}  // namespace interprobe::collective
