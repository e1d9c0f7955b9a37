#pragma once
// The host copy engine: memcpy between buffers on chosen NUMA nodes with 1..N threads,
// pageable or locked, and a copy staged through a double-buffered bounce buffer (the host leg
// of a staged GPU copy). Runs everywhere.
#include <cstdint>
#include <memory>
#include <string>

#include "probes/bandwidth/copy_engine.hpp"
#include "probes/bandwidth/page_backing.hpp"

namespace interprobe {

class NumaPlacement;
class HostBufferCache;

struct HostPathSpec {
  std::string kind = "memcpy";  // memcpy | staged
  int src_node = 0, dst_node = 0;
  unsigned threads = 1;
  bool locked = false;  // mlock the source and destination (the bounce buffer always is)
  std::uint64_t chunk_bytes = 4u << 20;  // staged: size of each half of the bounce buffer
  std::uint64_t max_bytes = 1ull << 30;  // cap from available memory, decided by the caller
  PagePolicy pages = PagePolicy::automatic;  // madvise of the source and destination
};

// Below this per-thread share a copy runs on one thread: waking helpers costs more than it saves.
inline constexpr std::uint64_t kMinBytesPerThread = 256u << 10;

// `cache` (optional) lends the buffers, so consecutive sweeps do not fault in gigabytes again.
std::unique_ptr<CopyEngine> make_host_engine(const HostPathSpec& spec, std::shared_ptr<const NumaPlacement> numa,
                                             std::shared_ptr<HostBufferCache> cache = nullptr);

}  // namespace interprobe
