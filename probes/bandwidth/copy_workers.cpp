#include "probes/bandwidth/copy_workers.hpp"

#include "probes/bandwidth/host_memory.hpp"

namespace interprobe {

CopyWorkers::CopyWorkers(unsigned threads, std::shared_ptr<const NumaPlacement> numa, std::optional<int> node) {
  if (numa) numa->bind_thread(node);
  for (unsigned i = 1; i < threads; ++i)
    helpers_.emplace_back([this, i, numa, node] {
      if (numa) numa->bind_thread(node);
      helper_loop(i);
    });
}

CopyWorkers::~CopyWorkers() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& t : helpers_) t.join();
}

void CopyWorkers::helper_loop(unsigned index) {
  std::uint32_t seen = 0;
  for (;;) {
    wait_for(generation_, [seen](std::uint32_t g) { return g != seen; });
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    (*job_)(index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

void CopyWorkers::run(const std::function<void(unsigned)>& job) {
  if (helpers_.empty()) {
    job(0);
    return;
  }
  job_ = &job;
  pending_.store(static_cast<std::uint32_t>(helpers_.size()), std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  job(0);
  wait_for(pending_, [](std::uint32_t p) { return p == 0; });
}

}  // namespace interprobe
