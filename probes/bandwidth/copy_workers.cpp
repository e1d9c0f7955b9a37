#include "probes/bandwidth/copy_workers.hpp"

#include "probes/bandwidth/host_memory.hpp"

namespace interprobe {

std::unique_ptr<ForkJoinPool> make_copy_workers(unsigned threads, std::shared_ptr<const NumaPlacement> numa,
                                                std::optional<int> node) {
  if (numa) numa->bind_thread(node);
  return std::make_unique<ForkJoinPool>(threads, kCopyWaitSpins, [numa, node] {
    if (numa) numa->bind_thread(node);
  });
}

}  // namespace interprobe
