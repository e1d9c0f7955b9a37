#pragma once
// The copy threads of a host sweep: a fork/join pool whose threads all run on one NUMA node.
#include <memory>
#include <optional>

#include "common/fork_join_pool.hpp"

namespace interprobe {

class NumaPlacement;

// How long a copy thread polls before it sleeps: long PAUSE loops are no better in a VM, where
// KVM's pause-loop exiting takes the vCPU away (tried: a 2 ms spin made the spread of 2-thread
// copies worse, not better).
inline constexpr int kCopyWaitSpins = 4000;

// `threads` in total, the calling thread included (bound to `node` here, the helpers as they start).
std::unique_ptr<ForkJoinPool> make_copy_workers(unsigned threads, std::shared_ptr<const NumaPlacement> numa,
                                                std::optional<int> node);

}  // namespace interprobe
