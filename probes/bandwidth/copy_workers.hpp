#pragma once
// A small pool of copy threads that stay alive across samples (thread start-up would
// dominate small copies). run() hands every worker the same job and returns when all finish.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace interprobe {

class NumaPlacement;

class CopyWorkers {
 public:
  // `threads` in total, the calling thread included; helpers run on `node`'s CPUs.
  CopyWorkers(unsigned threads, std::shared_ptr<const NumaPlacement> numa, std::optional<int> node);
  ~CopyWorkers();
  CopyWorkers(const CopyWorkers&) = delete;
  CopyWorkers& operator=(const CopyWorkers&) = delete;

  unsigned size() const { return static_cast<unsigned>(helpers_.size()) + 1; }
  // job(i) for i in [0, size()); i == 0 runs on the calling thread.
  void run(const std::function<void(unsigned)>& job);

 private:
  void helper_loop(unsigned index);
  std::vector<std::thread> helpers_;
  std::atomic<std::uint32_t> generation_{0};
  std::atomic<std::uint32_t> pending_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(unsigned)>* job_ = nullptr;
};

// Waits until `counter` satisfies `ready`: spins briefly, then sleeps on the atomic. Long
// PAUSE loops are no better in a VM: KVM's pause-loop exiting takes the vCPU away (tried: a
// 2 ms spin made the spread of 2-thread copies worse, not better).
template <class Ready>
void wait_for(const std::atomic<std::uint32_t>& counter, Ready ready) {
  for (int spin = 0; spin < 4000; ++spin) {
    if (ready(counter.load(std::memory_order_acquire))) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  for (;;) {
    std::uint32_t seen = counter.load(std::memory_order_acquire);
    if (ready(seen)) return;
    counter.wait(seen, std::memory_order_acquire);
  }
}

}  // namespace interprobe
