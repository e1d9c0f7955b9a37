// One engine class runs every CUDA path: buffers on the GPU or in (pinned or pageable,
// NUMA-placed) host memory, copies queued behind a hold kernel and timed with events, the
// destination checked against the pattern. Driver API only (probes/gpu/cuda_device.hpp), no toolkit.
#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "probes/bandwidth/cuda_kernels.hpp"
#include "probes/bandwidth/cuda_path.hpp"
#include "probes/gpu/cuda_device.hpp"
#include "probes/bandwidth/host_memory.hpp"
#include "probes/bandwidth/pattern.hpp"
#include "common/stopwatch.hpp"
#include "common/units.hpp"

namespace interprobe {

namespace {

using namespace interprobe::cuda;

// Queuing a full batch (kMaxQueuedOps copies) takes milliseconds; a spin of a second is ample and
// bounds the loss where the driver blocks enqueue behind the held stream.
constexpr std::uint64_t kHoldTimeoutNs = 1'000'000'000ull;
constexpr std::uint64_t kMaxQueuedOps = 256;  // behind a hold kernel; more could fill the queue and stall enqueue

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// One end of a copy: GPU memory, or host memory (optionally pinned).
struct Side {
  int device = -1;
  DeviceMemory gpu;
  HostBuffer host;
  PinnedRegistration pin;
  void* ptr() const { return device >= 0 ? gpu.get() : static_cast<void*>(host.data()); }
  void* kernel_ptr() const { return device >= 0 ? gpu.get() : pin.device_pointer(); }
  void clear() {  // unregister before the memory goes
    pin = PinnedRegistration();
    host = HostBuffer();
    gpu = DeviceMemory();
    device = -1;
  }
};

class CudaPathEngine : public CopyEngine {
 public:
  CudaPathEngine(const CudaPathSpec& spec, std::shared_ptr<const NumaPlacement> numa)
      : spec_(spec), numa_(std::move(numa)) {}
  ~CudaPathEngine() override { release(); }

  report::BandwidthSweep describe() const override {
    report::BandwidthSweep s;
    s.engine = report::BandwidthEngine::cuda;
    s.kind = copy_kind(spec_.kind);
    s.src = spec_.src_name;
    s.dst = spec_.dst_name;
    s.directions = 1;  // a bidirectional run reports its measured direction (below), as nvbandwidth
    if (spec_.src < 0 || spec_.dst < 0 || staged()) s.memory_kind = spec_.pinned ? report::MemoryKind::pinned : report::MemoryKind::pageable;
    else s.memory_kind = report::MemoryKind::device;
    if (!spec_.placement_note.empty()) s.notes.push_back(spec_.placement_note);
    if (sm())
      s.notes.push_back(fmt::format("SM copy kernel, up to {} blocks of {} threads", blocks(), cuda_kernels::kThreadsPerBlock));
    if (spec_.kind == "p2p_off") s.notes.push_back("peer access disabled: cuMemcpyPeerAsync is staged by the driver");
    if (bidir())
      s.notes.push_back(fmt::format("{} -> {} while {} -> {} runs at once from the same start: GB/s of the {} -> {} stream "
                                    "under the opposite traffic (nvbandwidth's CE bidirectional figure)",
                                    spec_.src_name, spec_.dst_name, spec_.dst_name, spec_.src_name, spec_.src_name,
                                    spec_.dst_name));
    if (staged())
      s.notes.push_back(fmt::format("D2H then H2D in {} chunks through two pinned halves, overlapped",
                                    format_bytes(spec_.chunk_bytes)));
    if (!spec_.pinned) s.notes.push_back("pageable host memory: timed without the hold kernel (the copy blocks the host)");
    return s;
  }

  TimingHints timing() const override {
    TimingHints h;
    h.min_sample_us = 50;  // events resolve ~0.5 us
    h.max_copies_per_sample = std::max<std::uint64_t>(1, std::min<std::uint64_t>(128, kMaxQueuedOps / ops_per_copy()));
    return h;
  }

  std::uint64_t max_bytes() const override { return spec_.max_bytes; }

  void reserve(std::uint64_t bytes) override {
    if (hung_) throw std::runtime_error("an earlier batch of this path never completed: the path is abandoned");
    release();
    bool peer_on = starts_with(spec_.kind, "p2p") && spec_.kind != "p2p_off";
    if (spec_.src >= 0 && spec_.dst >= 0 && spec_.src != spec_.dst) {
      set_peer_access(spec_.src, spec_.dst, peer_on);
      set_peer_access(spec_.dst, spec_.src, peer_on);
    }
    src_ = make_side(spec_.src, bytes);
    dst_ = make_side(spec_.dst, bytes);
    if (bidir()) {
      rsrc_ = make_side(spec_.dst, bytes);
      rdst_ = make_side(spec_.src, bytes);
    }
    if (staged()) {
      bounce_ = HostBuffer(numa_, 2 * spec_.chunk_bytes, spec_.host_node);
      bounce_.touch();
      bounce_pin_ = PinnedRegistration(issuing_device(), bounce_.data(), bounce_.size());
    }
    int a = issuing_device(), b = second_device();
    stream_a_.emplace(a);
    start_a_.emplace(a, true);
    stop_a_.emplace(a, true);
    if (b >= 0) {
      stream_b_.emplace(b);
      start_b_.emplace(b, true);
      stop_b_.emplace(b, true);
    }
    if (staged()) {
      for (int i = 0; i < 2; ++i) {
        d2h_done_[i].emplace(spec_.src, false);
        h2d_done_[i].emplace(spec_.dst, false);
      }
    }
    hold_.emplace(a);
  }

  void prepare(std::uint64_t bytes) override {
    if (hung_) throw std::runtime_error("an earlier batch of this path never completed: the path is abandoned");
    if (!stream_a_ || src_.ptr() == nullptr || (src_.device >= 0 ? src_.gpu.size() : src_.host.size()) < bytes)
      reserve(bytes);
    bytes_ = bytes;
    fill(src_, seed());
    poison(dst_, seed());
    if (bidir()) {
      fill(rsrc_, reverse_seed());
      poison(rdst_, reverse_seed());
    }
    synchronize_devices();
  }

  double copy_us(std::uint64_t copies) override {
    bool hold = !hold_stalls_ && spec_.pinned && copies * ops_per_copy() <= kMaxQueuedOps;
    double enqueue_s = 0;
    double us = timed_batch(copies, hold, &enqueue_s);
    // The spin ended by its timeout, or enqueue outlasted it: the driver made the host wait for
    // the held stream (it stages peer copies synchronously) or enqueue is that slow. The batch's
    // time holds that wait: time it again plainly, and every later batch of this path too.
    if (hold && (hold_->timed_out() || enqueue_s * 1e9 > static_cast<double>(kHoldTimeoutNs))) {
      hold_stalls_ = true;
      timing_notes_.push_back(fmt::format("enqueue stalled behind the hold kernel at {} (the driver waited for the held "
                                          "stream; peer copies staged synchronously?): timed without the hold kernel from "
                                          "there on, so enqueue cost is inside the times",
                                          format_bytes(bytes_)));
      us = timed_batch(copies, false, nullptr);
    }
    return us;
  }

  std::vector<std::string> timing_notes() const override { return timing_notes_; }

 private:
  // One batch between events; `enqueue_s` gets how long queuing it kept the host.
  double timed_batch(std::uint64_t copies, bool hold, double* enqueue_s) {
    Stopwatch enqueue_clock;
    // A failed enqueue (a sticky driver error) must not leave the hold kernel spinning until its
    // timeout: every later call on the stream, and freeing it, would wait behind it.
    struct ReleaseOnExit {
      HoldFlag* flag;
      ~ReleaseOnExit() {
        if (flag) flag->release();
      }
    } release_on_exit{hold ? &*hold_ : nullptr};
    if (hold) {
      hold_->arm();
      hold_->hold(*stream_a_, kHoldTimeoutNs);
      if (bidir()) hold_->hold(*stream_b_, kHoldTimeoutNs);
    }
    start_a_->record(*stream_a_);
    if (bidir()) {  // as nvbandwidth: both directions start from stream A's start event
      wait_event(*stream_b_, *start_a_);
      start_b_->record(*stream_b_);
    }
    if (staged()) {
      enqueue_staged(copies);
    } else {
      for (std::uint64_t c = 0; c < copies; ++c) {
        enqueue(*stream_a_, src_, dst_);
        if (bidir()) enqueue(*stream_b_, rsrc_, rdst_);
      }
    }
    stop_a_->record(*stream_a_);
    if (bidir()) stop_b_->record(*stream_b_);
    if (hold) hold_->release();
    if (enqueue_s) *enqueue_s = enqueue_clock.elapsed_s();
    wait_or_abandon(*stop_a_);
    double ms = stop_a_->elapsed_ms_since(*start_a_);
    if (bidir()) wait_or_abandon(*stop_b_);  // the opposite traffic ran as long as it had to; its time is not the figure
    return ms * 1e3;
  }

  // nvbandwidth's CE bidirectional tests report the measured stream alone, the other one being
  // interference (MemcpyOperation's default BandwidthValue::USE_FIRST_BW, calculateFirstBandwidth;
  // README: "CE bidir. bandwidth = (size of data on measured stream) / (time on measured stream)");
  // only its SM bidirectional tests sum the two (SUM_BW). Stream A is the measured one here.

  // The watchdog: a batch not done within the completion timeout is hung work that still uses this
  // path's buffers and streams. Freeing them would wait for it (cuMemFree and cuCtxSynchronize
  // synchronize), so from here on nothing of the path is synchronized or freed: release() leaves it
  // all to the process's end.
  void wait_or_abandon(const Event& stop) {
    try {
      stop.synchronize(spec_.completion_timeout_s);
    } catch (const std::runtime_error&) {
      hung_ = true;
      throw;
    }
  }

  // What a hung path owned, kept (never freed nor unregistered) until the process ends.
  struct Abandoned {
    Side src, dst, rsrc, rdst;
    HostBuffer bounce;
    PinnedRegistration bounce_pin;
    std::optional<DeviceMemory> counter;  // the hold flag is freed: its kernel ended before the wait
  };
  static std::vector<std::unique_ptr<Abandoned>>& abandoned() {
    static auto* kept = new std::vector<std::unique_ptr<Abandoned>>;  // never destroyed, on purpose
    return *kept;
  }
  void abandon_buffers() {
    auto kept = std::make_unique<Abandoned>();
    kept->src = std::move(src_);
    kept->dst = std::move(dst_);
    kept->rsrc = std::move(rsrc_);
    kept->rdst = std::move(rdst_);
    kept->bounce = std::move(bounce_);
    kept->bounce_pin = std::move(bounce_pin_);
    kept->counter = std::move(counter_);
    counter_.reset();
    for (Side* s : {&src_, &dst_, &rsrc_, &rdst_}) s->device = -1;
    abandoned().push_back(std::move(kept));
  }

 public:
  bool verify() override {
    if (hung_) throw std::runtime_error("an earlier batch of this path never completed: nothing to verify");
    synchronize_devices();
    bool ok = mismatches(dst_, seed()) == 0;
    if (bidir()) ok = mismatches(rdst_, reverse_seed()) == 0 && ok;
    return ok;
  }

  void release() override {
    if (hung_) abandon_buffers();
    hold_.reset();
    for (auto& e : d2h_done_) e.reset();
    for (auto& e : h2d_done_) e.reset();
    start_a_.reset();
    stop_a_.reset();
    start_b_.reset();
    stop_b_.reset();
    stream_a_.reset();
    stream_b_.reset();
    counter_.reset();
    bounce_pin_ = PinnedRegistration();
    bounce_ = HostBuffer();
    for (Side* s : {&src_, &dst_, &rsrc_, &rdst_}) s->clear();
  }

 private:
  bool sm() const { return spec_.kind.size() > 3 && spec_.kind.compare(spec_.kind.size() - 3, 3, "_sm") == 0; }
  bool bidir() const { return spec_.kind == "p2p_bidir_ce"; }
  bool staged() const { return starts_with(spec_.kind, "staged"); }
  bool peer_copy() const { return starts_with(spec_.kind, "p2p") && !sm(); }
  std::uint64_t seed() const { return bytes_; }
  std::uint64_t reverse_seed() const { return bytes_ ^ 0x5bd1e995ull; }
  int blocks() const { return full_occupancy_blocks(spec_.sm_count, spec_.max_threads_per_sm, cuda_kernels::kThreadsPerBlock); }
  std::uint64_t chunks() const { return std::max<std::uint64_t>(1, (bytes_ + spec_.chunk_bytes - 1) / spec_.chunk_bytes); }
  std::uint64_t ops_per_copy() const { return staged() ? 6 * chunks() : (bidir() ? 2 : 1); }

  // Whose stream runs the copy: the reader for h2d and *_read_*, the writer otherwise.
  int issuing_device() const {
    if (spec_.src < 0) return spec_.dst;
    if (spec_.dst < 0) return spec_.src;
    return spec_.kind.find("_read_") != std::string::npos ? spec_.dst : spec_.src;
  }
  int second_device() const { return bidir() || staged() ? spec_.dst : -1; }

  // Fills run on each GPU's legacy stream, which the non-blocking copy streams do not wait for.
  void synchronize_devices() {
    for (int d : {spec_.src, spec_.dst})
      if (d >= 0) synchronize_device(d);
  }

  Side make_side(int device, std::uint64_t bytes) {
    Side s;
    s.device = device;
    if (device >= 0) {
      s.gpu = DeviceMemory(device, bytes);
      return s;
    }
    s.host = HostBuffer(numa_, bytes, spec_.host_node);
    s.host.touch();
    if (spec_.pinned) s.pin = PinnedRegistration(issuing_device(), s.host.data(), s.host.size());
    return s;
  }

  void fill(const Side& s, std::uint64_t seed) {
    if (s.device < 0) return fill_pattern(s.ptr(), bytes_, seed);
    DeviceGuard guard(s.device);
    cuda_kernels::launch_fill_pattern(s.device, nullptr, s.ptr(), bytes_, seed, blocks());
  }

  // Every byte 0 differs from the pattern's first byte; a copy that did not happen cannot verify.
  void poison(const Side& s, std::uint64_t seed) {
    int value = static_cast<unsigned char>(~pattern_byte(0, seed));
    if (s.device < 0) return (void)std::memset(s.ptr(), value, bytes_);
    memset_device(s.device, s.ptr(), value, bytes_);
  }

  std::uint64_t mismatches(const Side& s, std::uint64_t seed) {
    if (s.device < 0) return count_pattern_mismatches(s.ptr(), bytes_, seed);
    DeviceGuard guard(s.device);
    if (!counter_ || counter_->device() != s.device) counter_.emplace(s.device, sizeof(unsigned long long));
    memset_device(s.device, counter_->get(), 0, sizeof(unsigned long long));
    cuda_kernels::launch_count_mismatches(s.device, nullptr, s.ptr(), bytes_, seed,
                                          static_cast<unsigned long long*>(counter_->get()), blocks());
    unsigned long long bad = 0;
    copy_to_host(s.device, &bad, counter_->get(), sizeof bad);
    return bad;
  }

  void enqueue(const Stream& stream, const Side& from, const Side& to) {
    if (sm()) {
      DeviceGuard guard(stream.device());
      cuda_kernels::launch_copy(stream.device(), stream.get(), to.kernel_ptr(), from.kernel_ptr(), bytes_, blocks());
    } else if (peer_copy()) {
      copy_peer_async(to.ptr(), to.device, from.ptr(), from.device, bytes_, stream);
    } else {
      copy_async(to.ptr(), to.device, from.ptr(), from.device, bytes_, stream);
    }
  }

  // D2H of chunk k into half k%2 on the source's stream, H2D out of it on the destination's;
  // a half is refilled only after its H2D finished. The stop event goes back onto stream A so
  // both timing events live on one device.
  void enqueue_staged(std::uint64_t copies) {
    std::uint64_t per_copy = chunks(), total = per_copy * copies;
    for (std::uint64_t k = 0; k < total; ++k) {
      std::uint64_t offset = (k % per_copy) * spec_.chunk_bytes;
      std::uint64_t length = std::min(spec_.chunk_bytes, bytes_ - offset);
      int half = static_cast<int>(k % 2);
      unsigned char* bounce = bounce_.data() + half * spec_.chunk_bytes;
      if (k >= 2) wait_event(*stream_a_, *h2d_done_[half]);
      copy_async(bounce, -1, static_cast<unsigned char*>(src_.ptr()) + offset, spec_.src, length, *stream_a_);
      d2h_done_[half]->record(*stream_a_);
      wait_event(*stream_b_, *d2h_done_[half]);
      copy_async(static_cast<unsigned char*>(dst_.ptr()) + offset, spec_.dst, bounce, -1, length, *stream_b_);
      h2d_done_[half]->record(*stream_b_);
    }
    stop_b_->record(*stream_b_);
    wait_event(*stream_a_, *stop_b_);
  }

  CudaPathSpec spec_;
  std::shared_ptr<const NumaPlacement> numa_;
  std::uint64_t bytes_ = 0;
  Side src_, dst_, rsrc_, rdst_;  // r*: the reverse direction of a bidirectional run
  HostBuffer bounce_;
  PinnedRegistration bounce_pin_;
  std::optional<Stream> stream_a_, stream_b_;
  std::optional<Event> start_a_, stop_a_, start_b_, stop_b_;
  std::optional<Event> d2h_done_[2], h2d_done_[2];
  std::optional<DeviceMemory> counter_;
  std::optional<HoldFlag> hold_;
  bool hold_stalls_ = false;               // the hold kernel stalled enqueue once: this path times without it
  bool hung_ = false;                      // a batch timed out: its work may still use the buffers
  std::vector<std::string> timing_notes_;
};

}  // namespace

std::unique_ptr<CopyEngine> make_cuda_path_engine(const CudaPathSpec& spec, std::shared_ptr<const NumaPlacement> numa) {
  return std::make_unique<CudaPathEngine>(spec, std::move(numa));
}

}  // namespace interprobe
