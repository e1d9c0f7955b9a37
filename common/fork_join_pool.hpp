#pragma once
// A fork/join pool of CPU threads that stay alive between jobs: run() hands every worker the same
// job (the caller is worker 0) and returns when all have finished. Waiting threads spin a while,
// then sleep on the atomic. Used by the host copy sweeps (several threads share one copy) and the
// host compute engine (one operation of a model step, as ggml's threadpool or an OpenMP region runs it).
#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace interprobe {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Waits until `counter` satisfies `ready`: `spins` polls with a PAUSE between them, then sleeps on
// the atomic (a futex). How long to spin is the caller's trade: a thread that sleeps between
// back-to-back jobs pays a wake-up each time (tens of microseconds under KVM), and long PAUSE
// loops in a VM can take the vCPU away (pause-loop exiting).
template <class Ready>
void spin_then_wait(const std::atomic<std::uint32_t>& counter, Ready ready, int spins) {
  for (int spin = 0; spin < spins; ++spin) {
    if (ready(counter.load(std::memory_order_acquire))) return;
    cpu_relax();
  }
  for (;;) {
    std::uint32_t seen = counter.load(std::memory_order_acquire);
    if (ready(seen)) return;
    counter.wait(seen, std::memory_order_acquire);
  }
}

class ForkJoinPool {
 public:
  // `workers` in total (at least 1), the caller included; each helper thread runs `on_start`
  // first (e.g. to bind itself to a NUMA node) and spins `spins_before_sleep` polls between jobs.
  ForkJoinPool(unsigned workers, int spins_before_sleep, std::function<void()> on_start = {});
  ~ForkJoinPool();
  ForkJoinPool(const ForkJoinPool&) = delete;
  ForkJoinPool& operator=(const ForkJoinPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(helpers_.size()) + 1; }
  // job(w) for every w in [0, size()); w == 0 on the calling thread. With one worker, a plain call.
  void run(const std::function<void(unsigned)>& job);

 private:
  void helper_loop(unsigned worker);

  int spins_;
  std::vector<std::thread> helpers_;
  std::atomic<std::uint32_t> generation_{0};
  std::atomic<std::uint32_t> pending_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(unsigned)>* job_ = nullptr;
};

}  // namespace interprobe
