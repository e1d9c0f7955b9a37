#include "probes/compute/host_pool.hpp"

#include <algorithm>

namespace interprobe {

namespace {

// About 50 microseconds of spinning before a thread sleeps in the kernel: back-to-back operations
// find it awake (the runtime's hot path), an idle pool costs no CPU.
constexpr int kSpinsBeforeSleep = 20000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

template <typename T, typename Done>
void spin_then_wait(const std::atomic<T>& value, T seen, Done done) {
  for (int i = 0; i < kSpinsBeforeSleep; ++i) {
    if (done()) return;
    cpu_relax();
  }
  while (!done()) value.wait(seen, std::memory_order_acquire);
}

}  // namespace

SpinPool::SpinPool(unsigned workers) : workers_(std::max(1u, workers)) {
  for (unsigned w = 1; w < workers_; ++w) threads_.emplace_back([this, w] { work(w); });
}

SpinPool::~SpinPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& t : threads_) t.join();
}

void SpinPool::run(const std::function<void(unsigned)>& job) {
  job_ = &job;
  pending_.store(workers_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  job(0);
  unsigned left = pending_.load(std::memory_order_acquire);
  while (left != 0) {
    spin_then_wait(pending_, left, [&] { return pending_.load(std::memory_order_acquire) != left; });
    left = pending_.load(std::memory_order_acquire);
  }
}

void SpinPool::work(unsigned worker) {
  std::uint64_t seen = 0;
  for (;;) {
    spin_then_wait(generation_, seen, [&] { return generation_.load(std::memory_order_acquire) != seen; });
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    (*job_)(worker);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

}  // namespace interprobe
