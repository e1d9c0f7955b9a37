#pragma once
// Host buffers placed on NUMA nodes (hwloc when compiled in) and the CPUs to run copies on.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "probes/bandwidth/page_backing.hpp"

namespace interprobe {

class NumaPlacement {
 public:
  // Never throws: without hwloc (or when it fails) the machine is one node and placement is
  // unavailable, with the reason.
  static std::shared_ptr<const NumaPlacement> detect();
  ~NumaPlacement();

  std::vector<int> nodes() const;  // OS indices of the NUMA nodes that have memory
  bool can_place() const;          // buffers really bound to the node asked for
  const std::string& reason() const;  // why placement is unavailable ("" when it is)
  unsigned cpus_near(std::optional<int> node) const;  // CPUs this process may use there
  // Best effort: runs the calling thread on the node's CPUs; false when it could not.
  bool bind_thread(std::optional<int> node) const;
  // Untouched memory bound to `node` (anywhere when nullopt or unavailable): a mapping of its
  // own, 2 MiB aligned, between PROT_NONE guards.
  void* allocate(std::size_t bytes, std::optional<int> node, bool& placed) const;
  void release(void* data, std::size_t bytes, bool placed) const;

  struct Impl;

 private:
  explicit NumaPlacement(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class HostBuffer {
 public:
  HostBuffer() = default;
  // `pages`: the madvise policy, applied to the whole buffer before any page is touched.
  HostBuffer(std::shared_ptr<const NumaPlacement> numa, std::size_t bytes, std::optional<int> node,
             PagePolicy pages = PagePolicy::huge);
  HostBuffer(HostBuffer&& other) noexcept;
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer();

  // Locks the first `bytes` (all when 0) in RAM (mlock); throws UnsupportedError naming
  // RLIMIT_MEMLOCK on failure.
  void lock(std::size_t bytes = 0);
  void unlock();
  // Writes every page once, so page faults happen before timing and not during it.
  void touch();
  unsigned char* data() const { return data_; }
  std::size_t size() const { return bytes_; }
  bool placed() const { return placed_; }  // bound to the node asked for
  // Bytes of the buffer backed by transparent huge pages now (/proc/self/smaps); nullopt when
  // that cannot be read.
  std::optional<std::uint64_t> huge_page_bytes() const;
  // How much of the start the user has written (faulted in); engines that share a buffer
  // through HostBufferCache extend it as their sizes grow instead of paying for all at once.
  std::size_t written_bytes = 0;
  bool locked() const { return locked_bytes_ > 0; }

 private:
  void reset() noexcept;
  std::shared_ptr<const NumaPlacement> numa_;
  unsigned char* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool placed_ = false;
  std::size_t locked_bytes_ = 0;
};

// Buffers that outlive one engine: host sweeps of one run share their source and destination
// instead of allocating and faulting in gigabytes per sweep. Not thread-safe; one probe uses it.
class HostBufferCache {
 public:
  explicit HostBufferCache(std::shared_ptr<const NumaPlacement> numa) : numa_(std::move(numa)) {}
  // At least `bytes` on `node` for `role` ("src", "dst", "bounce") advised `pages`; `fresh` when
  // (re)allocated.
  HostBuffer& get(const std::string& role, int node, std::size_t bytes, bool& fresh,
                  PagePolicy pages = PagePolicy::huge);
  // The buffer of `role` on `node` replaced by a new mapping of the same size, at another address
  // and not yet touched: its pages are faulted in afresh when it is first written (after the old
  // one is freed, so the kernel may hand some of the same physical pages back).
  HostBuffer& renew(const std::string& role, int node, PagePolicy pages = PagePolicy::huge);

 private:
  struct Entry {
    std::string role;
    int node;
    PagePolicy pages;
    HostBuffer buffer;
  };
  Entry* find(const std::string& role, int node, PagePolicy pages);  // null when none

  std::shared_ptr<const NumaPlacement> numa_;
  std::deque<Entry> entries_;  // a deque: get() hands out references that must survive later gets
};

class HostRoot;

// Bytes of memory the kernel says are available (MemAvailable), nullopt when unknown.
std::optional<std::size_t> host_memory_available_bytes(const HostRoot& root);
// RLIMIT_MEMLOCK in bytes; nullopt = unlimited, or lifted by CAP_IPC_LOCK.
std::optional<std::size_t> locked_memory_limit_bytes();

}  // namespace interprobe
