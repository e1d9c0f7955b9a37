#include "common/fork_join_pool.hpp"

#include <algorithm>

namespace interprobe {

ForkJoinPool::ForkJoinPool(unsigned workers, int spins_before_sleep, std::function<void()> on_start)
    : spins_(spins_before_sleep) {
  for (unsigned w = 1; w < std::max(1u, workers); ++w)
    helpers_.emplace_back([this, w, on_start] {
      if (on_start) on_start();
      helper_loop(w);
    });
}

ForkJoinPool::~ForkJoinPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& t : helpers_) t.join();
}

void ForkJoinPool::helper_loop(unsigned worker) {
  std::uint32_t seen = 0;
  for (;;) {
    spin_then_wait(generation_, [seen](std::uint32_t g) { return g != seen; }, spins_);
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    (*job_)(worker);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

void ForkJoinPool::run(const std::function<void(unsigned)>& job) {
  if (helpers_.empty()) {
    job(0);
    return;
  }
  job_ = &job;
  pending_.store(static_cast<std::uint32_t>(helpers_.size()), std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  job(0);
  spin_then_wait(pending_, [](std::uint32_t p) { return p == 0; }, spins_);
}

}  // namespace interprobe
