#pragma once
// A fork/join pool of CPU threads that spin between jobs, as CPU inference runtimes (ggml's
// threadpool, OpenMP's parallel regions) run each operation of a model step: every thread takes
// its share, all meet at the end. The caller is worker 0. An empty job costs what such a runtime
// pays per operation before any work: the host engine's launch floor.
#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace interprobe {

class SpinPool {
 public:
  explicit SpinPool(unsigned workers);  // workers >= 1, the caller included
  ~SpinPool();
  SpinPool(const SpinPool&) = delete;
  SpinPool& operator=(const SpinPool&) = delete;

  unsigned workers() const { return workers_; }
  // Runs job(w) on every worker w in [0, workers) and returns when all have finished.
  void run(const std::function<void(unsigned)>& job);

 private:
  void work(unsigned worker);

  unsigned workers_;
  std::vector<std::thread> threads_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<unsigned> pending_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(unsigned)>* job_ = nullptr;
};

}  // namespace interprobe
