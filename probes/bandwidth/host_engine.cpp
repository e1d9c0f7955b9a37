#include "probes/bandwidth/host_engine.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "probes/bandwidth/copy_workers.hpp"
#include "probes/bandwidth/host_memory.hpp"
#include "probes/bandwidth/pattern.hpp"
#include "common/errors.hpp"
#include "common/interrupt.hpp"
#include "common/stopwatch.hpp"
#include "common/units.hpp"

namespace interprobe {

namespace {

// Keeps the compiler from merging or dropping repeated copies into the same buffer.
inline void clobber_memory() { asm volatile("" ::: "memory"); }

// Where the destination and the bounce buffer start within their mappings, which are page
// aligned like the source's. At the same offset within a 4 KiB page as the source, each copy's
// loads look to the CPU as if they may depend on the last copy's stores (4K aliasing), and a loop
// of small copies settled at 6, 7, 8 or 9 cycles a copy by chance, from one pass or run to the
// next (64 B: 1.56 ns, or 2.6-6 ns). Offsets that differ in the low 12 bits, as STREAM offsets its
// arrays, gave one speed from 64 B up; copies of a few bytes still land a few cycles apart, which
// compare allows for (kCopyLoopCycles, model/metrics.cpp). Cache-line multiples, so every
// copy keeps the source's alignment.
constexpr std::size_t kDstOffsetBytes = 33 * 64;
constexpr std::size_t kBounceOffsetBytes = 17 * 64;

class HostEngine : public CopyEngine {
 public:
  HostEngine(const HostPathSpec& spec, std::shared_ptr<const NumaPlacement> numa, std::shared_ptr<HostBufferCache> cache)
      : spec_(spec), numa_(std::move(numa)), cache_(std::move(cache)) {
    if (!cache_) cache_ = std::make_shared<HostBufferCache>(numa_);
    spec_.threads = std::max(1u, spec_.threads);
    if (spec_.kind == "staged") spec_.threads = 2;  // one thread fills the bounce buffer, one drains it
  }

  report::BandwidthSweep describe() const override {
    report::BandwidthSweep s;
    s.engine = report::BandwidthEngine::host;
    s.kind = copy_kind(spec_.kind);
    s.src = fmt::format("node{}", spec_.src_node);
    s.dst = fmt::format("node{}", spec_.dst_node);
    s.memory_kind = spec_.locked ? report::MemoryKind::locked : report::MemoryKind::pageable;
    s.threads = spec_.threads;
    s.pages = spec_.pages;
    if (!numa_->can_place()) s.notes.push_back(numa_->reason());
    if (spec_.kind == "memcpy" && spec_.threads > 1)
      s.notes.push_back(fmt::format("copies below {} run on one thread", format_bytes(kMinBytesPerThread * spec_.threads)));
    if (spec_.kind == "staged")
      s.notes.push_back(fmt::format("through a bounce buffer of 2 x {} (locked where ulimit -l allows), one thread "
                                    "filling while one drains",
                                    format_bytes(spec_.chunk_bytes)));
    return s;
  }

  TimingHints timing() const override {
    TimingHints h;
    // 5 ms per sample: on a VM, steal time and host interrupts make 250 us samples of the same
    // copy differ by 10-25%; over 5 ms they average out (CV ~1% measured on a 2-vCPU guest).
    h.min_sample_us = 20000;
    return h;
  }

  std::uint64_t max_bytes() const override { return spec_.max_bytes; }

  void reserve(std::uint64_t max_bytes) override {
    if (holds(max_bytes)) return;
    release();
    bool fresh = false;
    src_ = &cache_->get("src", spec_.src_node, max_bytes, fresh, spec_.pages);
    dst_ = &cache_->get("dst", spec_.dst_node, max_bytes + kDstOffsetBytes, fresh, spec_.pages);
    place(max_bytes);
  }

  void replace_buffers() override {
    if (!src_) return;
    std::uint64_t bytes = src_->size();
    release();
    src_ = &cache_->renew("src", spec_.src_node, spec_.pages);
    dst_ = &cache_->renew("dst", spec_.dst_node, spec_.pages);
    place(bytes);
  }

  // Locks and faults in the source and destination, and starts the copy threads.
  void place(std::uint64_t max_bytes) {
    bool fresh = false;
    if (spec_.locked) {
      src_->lock(max_bytes);
      dst_->lock(max_bytes + kDstOffsetBytes);
    }
    // Every page is faulted in now, under one policy, before any size is timed: the sizes are
    // visited in a shuffled order, and a buffer faulted piecemeal as sizes grew got huge pages
    // for some ranges and not others (two rate plateaus on one sweep).
    prefault(*src_, true);
    prefault(*dst_, false);
    if (spec_.kind == "staged") {
      bounce_ = &cache_->get("bounce", spec_.src_node, 2 * spec_.chunk_bytes + kBounceOffsetBytes, fresh);
      if (fresh) {
        try {
          bounce_->lock();  // as a GPU staging buffer would be
        } catch (const UnsupportedError&) {
          // Under a small RLIMIT_MEMLOCK it stays pageable; the host leg is the same copy.
        }
        bounce_->touch();
      }
    }
    if (spec_.threads > 1) workers_ = make_copy_workers(spec_.threads, numa_, spec_.src_node);
    cpus_seen_.assign(spec_.threads, {});
  }

  void prepare(std::uint64_t bytes) override {
    if (!holds(bytes)) reserve(bytes);
    bytes_ = bytes;
    // Each visit poisons the destination, so a copy that did not happen (or went elsewhere)
    // cannot verify.
    std::memset(dst(), static_cast<unsigned char>(~src_->data()[0]), bytes);
    for (auto& seen : cpus_seen_) seen.clear();
  }

  double copy_us(std::uint64_t copies) override {
    Stopwatch clock;
    if (spec_.kind == "staged") staged(copies);
    else memcpy_copies(copies);
    return clock.elapsed_us();
  }

  bool verify() override { return std::memcmp(dst(), src_->data(), bytes_) == 0; }

  std::vector<int> copy_cpus() const override {
    std::vector<int> all;
    for (const auto& seen : cpus_seen_) all.insert(all.end(), seen.begin(), seen.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return all;
  }

  std::vector<report::BandwidthBuffer> buffers() const override {
    std::vector<report::BandwidthBuffer> out;
    auto add = [&](report::HostBufferRole role, const HostBuffer* b) {
      if (!b || b->size() == 0) return;
      auto huge = b->huge_page_bytes();
      out.push_back({role, static_cast<std::int64_t>(b->size()),
                     huge ? std::optional<std::int64_t>(static_cast<std::int64_t>(*huge)) : std::nullopt});
    };
    add(report::HostBufferRole::src, src_);
    add(report::HostBufferRole::dst, dst_);
    add(report::HostBufferRole::bounce, bounce_);
    return out;
  }

  void release() override {
    workers_.reset();
    if (spec_.locked) {  // the cache keeps the memory for the next sweep, unlocked
      if (src_) src_->unlock();
      if (dst_) dst_->unlock();
    }
    src_ = dst_ = bounce_ = nullptr;
  }

 private:
  unsigned char* dst() const { return dst_->data() + kDstOffsetBytes; }
  // The buffers have room for copies of `bytes`: the source's, and the destination's past its offset.
  bool holds(std::uint64_t bytes) const {
    return src_ && src_->size() >= bytes && dst_->size() >= bytes + kDstOffsetBytes;
  }
  unsigned char* bounce() const { return bounce_->data() + kBounceOffsetBytes; }

  // Writes the rest of a buffer that earlier sweeps have not written yet: the source with its
  // pattern, the destination with zeros. Ctrl-C is answered between 64 MiB pieces.
  static void prefault(HostBuffer& b, bool pattern) {
    constexpr std::size_t kPiece = 64u << 20;
    while (b.written_bytes < b.size()) {
      throw_if_interrupted();
      std::size_t n = std::min(kPiece, b.size() - b.written_bytes);
      if (pattern) fill_pattern(b.data() + b.written_bytes, n, b.written_bytes + 1);
      else std::memset(b.data() + b.written_bytes, 0, n);
      b.written_bytes += n;
    }
  }

  // The CPU thread `w` runs on, before and after its copies (a migration shows as two).
  void note_cpu(unsigned w) {
    if (w >= cpus_seen_.size()) return;
    int cpu = ::sched_getcpu();
    auto& seen = cpus_seen_[w];
    if (cpu >= 0 && std::find(seen.begin(), seen.end(), cpu) == seen.end()) seen.push_back(cpu);
  }

  void memcpy_copies(std::uint64_t copies) {
    unsigned threads = workers_ ? workers_->size() : 1;
    if (threads == 1 || bytes_ < kMinBytesPerThread * threads) {
      note_cpu(0);
      unsigned char* to = dst();
      const unsigned char* from = src_->data();
      const std::size_t n = bytes_;
      for (std::uint64_t c = 0; c < copies; ++c) {
        std::memcpy(to, from, n);
        clobber_memory();
      }
      note_cpu(0);
      return;
    }
    // Each thread copies its share `copies` times; cache-line aligned shares avoid false sharing.
    std::uint64_t share = (bytes_ / threads + 63) & ~std::uint64_t{63};
    workers_->run([&](unsigned w) {
      std::uint64_t begin = std::min<std::uint64_t>(bytes_, w * share);
      std::uint64_t end = std::min<std::uint64_t>(bytes_, begin + share);
      note_cpu(w);
      for (std::uint64_t c = 0; c < copies && end > begin; ++c) {
        std::memcpy(dst() + begin, src_->data() + begin, end - begin);
        clobber_memory();
      }
      note_cpu(w);
    });
  }

  void staged(std::uint64_t copies) {
    std::uint64_t chunk = spec_.chunk_bytes;
    std::uint64_t chunks_per_copy = (bytes_ + chunk - 1) / chunk;
    // By value, in and out: nothing of it lives in memory that the copies' clobbers would make the
    // loops store and reload (the one-thread loop below keeps everything in registers).
    struct ChunkRange {
      std::uint64_t offset, length;
    };
    auto chunk_range = [chunk, chunks_per_copy, bytes = bytes_](std::uint64_t k) {
      std::uint64_t offset = (k % chunks_per_copy) * chunk;
      return ChunkRange{offset, std::min(chunk, bytes - offset)};
    };
    std::uint64_t total = chunks_per_copy * copies;
    if (chunks_per_copy < 2 || !workers_) {  // nothing to overlap: one thread, in and out
      note_cpu(0);
      // Pointers and offsets in registers: a local on the stack is stored and reloaded around
      // each memcpy call, at an offset within its page that changes from run to run.
      unsigned char* half = bounce();
      unsigned char* to = dst();
      const unsigned char* from = src_->data();
      for (std::uint64_t k = 0; k < total; ++k) {
        const auto [off, len] = chunk_range(k);
        std::memcpy(half, from + off, len);
        clobber_memory();
        std::memcpy(to + off, half, len);
        clobber_memory();
      }
      note_cpu(0);
      return;
    }
    produced_.store(0);
    consumed_.store(0);
    workers_->run([&](unsigned w) {
      note_cpu(w);
      for (std::uint64_t k = 0; k < total; ++k) {
        const auto [off, len] = chunk_range(k);
        unsigned char* half = bounce() + (k % 2) * chunk;
        auto k32 = static_cast<std::uint32_t>(k);
        if (w == 1) {  // producer: fill half k%2 once the consumer has drained it
          spin_then_wait(consumed_, [k32](std::uint32_t c) { return k32 < c + 2; }, kCopyWaitSpins);
          std::memcpy(half, src_->data() + off, len);
          produced_.store(k32 + 1, std::memory_order_release);
          produced_.notify_one();
        } else if (w == 0) {  // consumer: drain half k%2 once it is full
          spin_then_wait(produced_, [k32](std::uint32_t p) { return p > k32; }, kCopyWaitSpins);
          std::memcpy(dst() + off, half, len);
          consumed_.store(k32 + 1, std::memory_order_release);
          consumed_.notify_one();
        }
      }
      note_cpu(w);
    });
  }

  HostPathSpec spec_;
  std::shared_ptr<const NumaPlacement> numa_;
  std::shared_ptr<HostBufferCache> cache_;
  HostBuffer *src_ = nullptr, *dst_ = nullptr, *bounce_ = nullptr;
  std::unique_ptr<ForkJoinPool> workers_;
  std::uint64_t bytes_ = 0;
  std::atomic<std::uint32_t> produced_{0}, consumed_{0};
  std::vector<std::vector<int>> cpus_seen_;  // per copy thread; each thread writes its own
};

}  // namespace

std::unique_ptr<CopyEngine> make_host_engine(const HostPathSpec& spec, std::shared_ptr<const NumaPlacement> numa,
                                             std::shared_ptr<HostBufferCache> cache) {
  if (spec.kind != "memcpy" && spec.kind != "staged")
    throw InputError(fmt::format("host engine: unknown copy kind '{}' (memcpy or staged)", spec.kind));
  if (!numa) numa = NumaPlacement::detect();
  return std::make_unique<HostEngine>(spec, std::move(numa), std::move(cache));
}

}  // namespace interprobe
