#include "sim_nccl_process.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

namespace sim_nccl {

namespace {

constexpr int kMaxRanks = 64;
// Each rank's slot: an all-reduce larger than this goes through in chunks, a barrier pair each,
// so the segment stays small (ranks x 4 MiB) whatever the sweep's largest size.
constexpr std::size_t kChunkBytes = std::size_t{4} << 20;
constexpr std::size_t kHeaderBytes = 16384;
constexpr char kMagic[] = "interprobe-sim-nccl 1";

struct RankSlot {
  std::int32_t pid = 0, device = 0;
  std::uint64_t sequence = 0;  // the collective this rank is in (1, 2, ...)
  std::uint64_t count = 0;
  std::int32_t type = 0, unused = 0;
  std::int64_t arrival_ns = 0;  // CLOCK_MONOTONIC (one clock for every process of the host)
};

}  // namespace

// Zero-filled by ftruncate: that is the state before anyone joined.
struct SharedHeader {
  std::uint32_t nranks, joined, ready, arrived, generation, aborted;
  RankSlot ranks[kMaxRanks];
};
static_assert(sizeof(SharedHeader) <= kHeaderBytes);

namespace {

template <class T>
std::atomic_ref<T> shared(T& value) {
  return std::atomic_ref<T>(value);
}

std::int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// Wakes every process waiting on `word` (a process-shared futex: no FUTEX_PRIVATE_FLAG).
void futex_wake(std::uint32_t* word) { syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0); }

// Sleeps while *word == seen, at most 2 ms, so that aborts and the deadline are noticed.
void futex_wait(std::uint32_t* word, std::uint32_t seen) {
  timespec limit{0, 2'000'000};
  syscall(SYS_futex, word, FUTEX_WAIT, seen, &limit, nullptr, 0);
}

std::int64_t deadline_ns() { return now_ns() + static_cast<std::int64_t>(settings().peer_timeout_s * 1e9); }

const char* segment_name(const UniqueId& id) {
  if (std::memcmp(id.internal, kMagic, sizeof kMagic) != 0) return nullptr;
  const char* name = id.internal + sizeof kMagic;
  if (!std::memchr(name, '\0', kUniqueIdBytes - sizeof kMagic)) return nullptr;
  return name;
}

}  // namespace

struct ProcessComm::Job {
  std::shared_ptr<ProcessComm> comm;
  const void* send;
  void* recv;
  std::size_t count;
  int type;
};

Result make_unique_id(UniqueId* id) {
  std::uint64_t random = 0;
  if (getrandom(&random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) random = static_cast<std::uint64_t>(now_ns());
  std::memset(id->internal, 0, kUniqueIdBytes);
  std::memcpy(id->internal, kMagic, sizeof kMagic);
  std::snprintf(id->internal + sizeof kMagic, kUniqueIdBytes - sizeof kMagic, "/interprobe-sim-nccl-%u-%d-%016llx",
                static_cast<unsigned>(getuid()), static_cast<int>(getpid()), static_cast<unsigned long long>(random));
  return kSuccess;
}

Result ProcessComm::join(const UniqueId& id, int nranks, int rank, int device, std::shared_ptr<ProcessComm>* out) {
  if (nranks < 1 || nranks > kMaxRanks || rank < 0 || rank >= nranks) return kInvalidArgument;
  const char* name = segment_name(id);
  if (!name) {
    log_warn("ncclCommInitRank: the unique id does not come from this ncclGetUniqueId");
    return kInvalidArgument;
  }
  std::shared_ptr<ProcessComm> c(new ProcessComm());
  c->name_ = name;
  c->nranks_ = nranks;
  c->rank_ = rank;
  c->device_ = device;
  const std::size_t bytes = kHeaderBytes + static_cast<std::size_t>(nranks) * kChunkBytes;
  int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
  if (fd < 0) {
    log_warn(std::string("ncclCommInitRank: shm_open ") + name + ": " + std::strerror(errno));
    return kSystemError;
  }
  struct stat st{};
  bool sized = fstat(fd, &st) == 0 && (static_cast<std::size_t>(st.st_size) >= bytes || ftruncate(fd, static_cast<off_t>(bytes)) == 0);
  void* at = sized ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  close(fd);
  if (at == MAP_FAILED) {
    log_warn(std::string("ncclCommInitRank: cannot map ") + name + ": " + std::strerror(errno));
    shm_unlink(name);
    return kSystemError;
  }
  c->header_ = static_cast<SharedHeader*>(at);
  c->slots_ = static_cast<std::byte*>(at) + kHeaderBytes;
  c->mapped_bytes_ = bytes;
  std::uint32_t expected = 0;
  auto want = static_cast<std::uint32_t>(nranks);
  if (!shared(c->header_->nranks).compare_exchange_strong(expected, want) && expected != want) {
    log_warn("ncclCommInitRank: rank " + std::to_string(rank) + " says " + std::to_string(nranks) + " ranks, another said " +
             std::to_string(expected));
    return kInvalidUsage;
  }
  std::int32_t no_pid = 0;
  RankSlot& mine = c->header_->ranks[rank];
  if (!shared(mine.pid).compare_exchange_strong(no_pid, static_cast<std::int32_t>(getpid()))) {
    log_warn("ncclCommInitRank: rank " + std::to_string(rank) + " joined twice");
    return kInvalidUsage;
  }
  shared(mine.device).store(device);
  if (rank == 0) log_info(Subsys::init, version_line());
  if (Result rc = c->wait_for_every_rank(); rc != kSuccess) return rc;
  for (int r = 0; r < nranks; ++r)
    if (r != rank && shared(c->header_->ranks[r].device).load() == device) {
      log_warn("Duplicate GPU detected : rank " + std::to_string(rank) + " and rank " + std::to_string(r) + " both on CUDA device " +
               std::to_string(device));
      return kInvalidUsage;
    }
  c->log_connection();
  *out = std::move(c);
  return kSuccess;
}

// The last rank to arrive removes the segment's name before it lets the others go on: from then
// on only the mappings hold it, and it goes when the last rank unmaps it, whichever way it ends.
Result ProcessComm::wait_for_every_rank() {
  auto ready = shared(header_->ready);
  if (shared(header_->joined).fetch_add(1) + 1 == static_cast<std::uint32_t>(nranks_)) {
    shm_unlink(name_.c_str());
    ready.store(1);
    futex_wake(&header_->ready);
    return kSuccess;
  }
  const std::int64_t deadline = deadline_ns();
  while (ready.load() == 0) {
    if (now_ns() > deadline) {
      shm_unlink(name_.c_str());
      log_warn("ncclCommInitRank: " + std::to_string(shared(header_->joined).load()) + " of " + std::to_string(nranks_) +
               " ranks joined within " + std::to_string(settings().peer_timeout_s) + " s (nccl.peer_timeout_s)");
      return kRemoteError;
    }
    futex_wait(&header_->ready, 0);
  }
  return kSuccess;
}

void ProcessComm::log_connection() const {
  if (nranks_ > 1) {
    const int next = (rank_ + 1) % nranks_;
    const int next_device = shared(header_->ranks[next].device).load();
    log_info(Subsys::init, "Channel 00/0 : " + std::to_string(rank_) + "[" + std::to_string(device_) + "] -> " + std::to_string(next) +
                               "[" + std::to_string(next_device) + "] via " + transport());
  }
  char comm[32];
  std::snprintf(comm, sizeof comm, "%p", static_cast<const void*>(this));
  log_info(Subsys::init, std::string("comm ") + comm + " rank " + std::to_string(rank_) + " nranks " + std::to_string(nranks_) +
                             " cudaDev " + std::to_string(device_) + " - Init COMPLETE");
}

ProcessComm::~ProcessComm() {
  if (header_) munmap(header_, mapped_bytes_);
  shm_unlink(name_.c_str());  // normally gone since every rank joined; not if one never came
}

Result ProcessComm::all_reduce(const void* send, void* recv, std::size_t count, int type, void* stream) {
  if (Result e = async_error_.load(); e != kSuccess) return e;
  {
    std::lock_guard lock(m_);
    if (aborted_) return kInvalidUsage;
  }
  auto host_func = cuda_entry<int(void*, void (*)(void*), void*)>("cuLaunchHostFunc");
  if (!host_func) return kUnhandledCudaError;
  auto* job = new Job{shared_from_this(), send, recv, count, type};
  if (host_func(stream, &ProcessComm::run_job, job) != 0) {
    delete job;
    return kUnhandledCudaError;
  }
  return kSuccess;
}

void ProcessComm::run_job(void* data) {
  std::unique_ptr<Job> job(static_cast<Job*>(data));
  job->comm->execute(*job);
}

void ProcessComm::execute(const Job& job) {
  if (async_error_.load() != kSuccess) return;  // the communicator already failed: nothing runs
  if (settings().hang) {
    wait_for_local_abort(-1);  // as a kernel whose peer never answers: until ncclCommAbort
    return;
  }
  if (Result rc = exchange(job); rc != kSuccess) {
    async_error_.store(rc);
    // Real NCCL's kernel keeps spinning after its proxy saw the error: the stream stays busy
    // until the caller, polling ncclCommGetAsyncError, aborts; bounded here.
    wait_for_local_abort(settings().peer_timeout_s);
  }
}

void ProcessComm::wait_for_local_abort(double limit_s) {
  std::unique_lock lock(m_);
  if (limit_s < 0) cv_.wait(lock, [&] { return aborted_; });
  else cv_.wait_for(lock, std::chrono::duration<double>(limit_s), [&] { return aborted_; });
}

void ProcessComm::abort() {
  {
    std::lock_guard lock(m_);
    aborted_ = true;
  }
  cv_.notify_all();
  shared(header_->aborted).store(1);
  futex_wake(&header_->generation);
  shm_unlink(name_.c_str());
}

Result ProcessComm::barrier() {
  auto generation = shared(header_->generation);
  const std::uint32_t seen = generation.load();
  if (shared(header_->arrived).fetch_add(1) + 1 == static_cast<std::uint32_t>(nranks_)) {
    shared(header_->arrived).store(0);
    generation.fetch_add(1);
    futex_wake(&header_->generation);
    return kSuccess;
  }
  const std::int64_t deadline = deadline_ns();
  while (generation.load() == seen) {
    if (shared(header_->aborted).load() != 0) {
      log_warn("rank " + std::to_string(rank_) + ": a peer aborted the communicator");
      return kRemoteError;
    }
    {
      std::lock_guard lock(m_);
      if (aborted_) return kInvalidUsage;
    }
    if (now_ns() > deadline) {
      log_warn("rank " + std::to_string(rank_) + ": peers did not reach all-reduce " + std::to_string(sequence_) + " within " +
               std::to_string(settings().peer_timeout_s) + " s (nccl.peer_timeout_s): a dead or stuck peer");
      return kRemoteError;
    }
    futex_wait(&header_->generation, seen);
  }
  return kSuccess;
}

// Chunk by chunk: this rank's part into its slot, barrier, every rank sums every slot in rank
// order (so all ranks hold the same bits, as in-process), barrier before the slots are reused.
// The result is held back until the ring model's time after the last rank arrived.
Result ProcessComm::exchange(const Job& job) {
  const std::size_t width = element_bytes(job.type);
  const std::size_t per_chunk = kChunkBytes / width;
  RankSlot& mine = header_->ranks[rank_];
  mine.sequence = ++sequence_;
  mine.count = job.count;
  mine.type = job.type;
  mine.arrival_ns = now_ns();
  std::int64_t start_ns = 0;
  std::vector<float> sum;
  std::size_t done = 0;
  do {
    const std::size_t n = std::min(per_chunk, job.count - done);
    std::memcpy(slots_ + static_cast<std::size_t>(rank_) * kChunkBytes, static_cast<const std::byte*>(job.send) + done * width, n * width);
    if (Result rc = barrier(); rc != kSuccess) return rc;
    if (done == 0) {
      for (int r = 0; r < nranks_; ++r) {
        const RankSlot& other = header_->ranks[r];
        if (other.sequence != mine.sequence || other.count != mine.count || other.type != mine.type) {
          log_warn("all-reduce " + std::to_string(sequence_) + ": rank " + std::to_string(r) + " called with " + std::to_string(other.count) +
                   " elements of type " + std::to_string(other.type) + " as its call " + std::to_string(other.sequence) + ", rank " +
                   std::to_string(rank_) + " with " + std::to_string(mine.count) + " of type " + std::to_string(mine.type));
          return kInvalidUsage;
        }
        start_ns = std::max(start_ns, other.arrival_ns);
      }
    }
    sum.assign(n, 0.0f);
    for (int r = 0; r < nranks_; ++r) accumulate(sum.data(), slots_ + static_cast<std::size_t>(r) * kChunkBytes, job.type, n);
    store_all(static_cast<std::byte*>(job.recv) + done * width, job.type, sum.data(), n);
    if (Result rc = barrier(); rc != kSuccess) return rc;
    done += n;
  } while (done < job.count);
  const double bytes = static_cast<double>(job.count * width);
  const std::int64_t end_ns = start_ns + static_cast<std::int64_t>(ring_seconds(bytes, nranks_) * 1e9);
  timespec until{static_cast<time_t>(end_ns / 1'000'000'000), static_cast<long>(end_ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr) == EINTR) {
  }
  log_info(Subsys::tuning, "AllReduce: " + std::to_string(static_cast<long long>(bytes)) + " Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}");
  return kSuccess;
}

}  // namespace sim_nccl
