#include "probes/compute/cuda_compute_engine.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "common/dynlib.hpp"
#include "common/errors.hpp"
#include "common/units.hpp"
#include "probes/bandwidth/cuda_kernels.hpp"
#include "probes/compute/cuda_compute_kernels.hpp"
#include "probes/compute/cuda_gemm_plan.hpp"
#include "probes/compute/pattern.hpp"
#include "probes/gpu/cuda_device.hpp"
#include "probes/gpu/cuda_driver.hpp"

namespace interprobe {

using report::ComputeDtype;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGraphChain = 100;  // empty kernels captured in the launch-floor graph
constexpr int kGraphReplays = 5;            // graphs timed; the median counts
constexpr int kSingleLaunches = 50;
// Operations queued behind a hold kernel: more could fill the stream's queue and stall the enqueue
// (a cuBLASLt GEMM may launch two kernels).
constexpr std::uint64_t kMaxQueuedOps = 256;
constexpr std::uint64_t kHoldTimeoutNs = 10'000'000'000ull;
// The simulator multiplies on this host (once per shape: repeats are skipped): a larger M x N x K
// takes seconds per point there. 2^25 runs the quick plan's 7168 x 4096 weight at M = 1.
constexpr double kSimulatedMaxMacs = 33554432.0;
// Device memory the simulated engine may use: room for the weight copies of a 7168 x 4096 bf16
// weight rotated past 2x a 126 MiB L2, held in this host's memory.
constexpr std::uint64_t kSimulatedMaxBytes = 512 * kMiB;
// Each weight copy starts on a 256-byte boundary (cuBLASLt's preferred alignment for every dtype).
constexpr std::size_t kWeightAlign = 256;

// How many copies of a weight of `weight_bytes` the GEMMs rotate across so that no call finds it
// in the L2 left by the one before: together more than twice the L2, as far as `room_bytes` holds.
std::size_t weight_copies(std::uint64_t weight_bytes, std::uint64_t l2_bytes, std::uint64_t room_bytes) {
  std::uint64_t wanted = 2 * l2_bytes / std::max<std::uint64_t>(weight_bytes, 1) + 1;
  std::uint64_t fit = room_bytes / std::max<std::uint64_t>(weight_bytes, 1);
  return static_cast<std::size_t>(std::max<std::uint64_t>(1, std::min(wanted, fit)));
}

// X or W filled with the pattern, encoded in chunks so a 28672 x 4096 weight never needs a
// float copy of itself on the host.
void fill_operand(int device, void* dst, GemmOperand operand, std::int64_t elements, ComputeDtype dtype) {
  auto* out = static_cast<unsigned char*>(dst);
  constexpr std::int64_t kChunk = std::int64_t{1} << 22;
  int eb = cublaslt::element_bytes_of(dtype);
  std::vector<float> values;
  for (std::int64_t at = 0; at < elements; at += kChunk) {
    std::int64_t count = std::min(kChunk, elements - at);
    values.resize(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) values[static_cast<std::size_t>(i)] = compute_pattern_value(operand, at + i);
    auto bytes = cublaslt::encode(dtype, values);
    cuda::copy_to_device(device, out + at * eb, bytes.data(), bytes.size());
  }
}

class CudaComputeEngine final : public ComputeEngine {
 public:
  CudaComputeEngine(cuda::DeviceInfo dev, std::size_t gpus, const cublaslt::Library& lib)
      : dev_(std::move(dev)), lib_(lib), workspace_bytes_(pytorch_workspace_bytes(dev_.cc_major, dev_.cc_minor)) {
    cuda::DeviceGuard guard(dev_.ordinal);
    stream_ = std::make_unique<cuda::Stream>(dev_.ordinal);
    workspace_ = cuda::DeviceMemory(dev_.ordinal, workspace_bytes_);
    lib_.check(lib_.create(&handle_), "cublasLtCreate");  // after the RAII members: a failure here leaks nothing
    simulated_ = lib_.simulated ? lib_.simulated : cu::driver().simulated;
    try {  // the engine's own kernels: a driver that cannot JIT them leaves GEMMs measurable
      compute_kernels::launch_empty(dev_.ordinal, stream_->get());
      stream_->synchronize();
    } catch (const VendorError& e) {
      kernels_reason_ = fmt::format("the compute kernels do not load: {}", e.what());
    }
    notes_.push_back(fmt::format("CUDA device {}, the first of {} GPU(s) in PCI bus order; cuBLASLt workspace {} (what "
                                 "PyTorch gives cuBLAS on compute capability {}.{})",
                                 dev_.ordinal, gpus, format_bytes(workspace_bytes_), dev_.cc_major, dev_.cc_minor));
  }
  ~CudaComputeEngine() override {
    release();
    release_stream();
    if (handle_) (void)lib_.destroy(handle_);
  }

  ComputeEngineInfo describe() const override {
    ComputeEngineInfo info;
    info.engine = report::ComputeEngineKind::cuda;
    info.library = "cuBLASLt";
    info.library_version = lib_.version;
    info.device = cuda::device_label(dev_.ordinal);
    info.simulated = simulated_;
    return info;  // notes come through notes(), after the sweep
  }

  ComputeTimingHints timing() const override {
    ComputeTimingHints h;
    h.min_sample_us = 1000;        // events resolve about 0.5 us
    h.max_ops_per_sample = kMaxQueuedOps;  // all behind the hold kernel
    // The simulator computes every product on the host: its sizes stay small.
    h.peak_size = simulated_ ? 256 : 8192;
    // Many times the L2 (50 MiB on H100, 126 MiB on B200); a multiple of 16 bytes for the kernel.
    h.stream_bytes = simulated_ ? 64 * kMiB : std::min<std::uint64_t>(1024 * kMiB, dev_.total_bytes / 8) / 16 * 16;
    return h;
  }

  report::DtypeSupport supports(ComputeDtype dtype) const override {
    if (auto it = support_.find(dtype); it != support_.end()) return it->second;
    report::DtypeSupport s{dtype, false, std::nullopt};
    if (dtype == ComputeDtype::f32) {
      s.reason = "the cuda engine measures the tensor-core dtypes (bf16, f16, fp8_e4m3); f32 GEMMs are the host engine's";
    } else {
      // Decided by the heuristic on a small problem, never by the architecture alone.
      cuda::DeviceGuard guard(dev_.ordinal);
      cublaslt::GemmPlan probe(lib_, handle_, GemmShape{64, 256, 256}, dtype, workspace_bytes_);
      cublaslt::Status status = cublaslt::kSuccess;
      s.supported = probe.choose(status);
      if (s.supported)
        s.reason = fmt::format("cuBLASLt heuristic offers {} algorithm(s) at 64x256x256", probe.chosen().offered);
      else
        s.reason = fmt::format("cuBLASLt {} offers no {} GEMM on {} (compute capability {}.{}{}): "
                               "cublasLtMatmulAlgoGetHeuristic: {}",
                               lib_.version, report::to_string(dtype), dev_.name, dev_.cc_major, dev_.cc_minor,
                               dtype == ComputeDtype::fp8_e4m3 ? "; FP8 tensor cores need 8.9 or newer" : "",
                               lib_.describe(status));
    }
    support_[dtype] = s;
    return s;
  }

  std::uint64_t max_bytes() const override {
    cuda::DeviceGuard guard(dev_.ordinal);
    std::size_t free_bytes = 0, total = 0;
    cu::check(cu::driver().mem_get_info(&free_bytes, &total), "cuMemGetInfo");
    auto usable = static_cast<std::uint64_t>(static_cast<double>(free_bytes) * 0.9);
    return simulated_ ? std::min<std::uint64_t>(usable, kSimulatedMaxBytes) : usable;
  }

  void prepare(const GemmShape& shape, ComputeDtype dtype) override {
    release();
    if (simulated_ && static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k) > kSimulatedMaxMacs)
      throw UnsupportedError(fmt::format("the simulator multiplies on this host; M x N x K above {} would take "
                                         "seconds per point", kSimulatedMaxMacs));
    cuda::DeviceGuard guard(dev_.ordinal);
    // The heuristic first: a shape the library has no kernel for is skipped before filling buffers.
    plan_ = std::make_unique<cublaslt::GemmPlan>(lib_, handle_, shape, dtype, workspace_bytes_);
    cublaslt::Status status = cublaslt::kSuccess;
    if (!plan_->choose(status))  // the sweep skips this shape with the reason
      throw UnsupportedError(fmt::format("cuBLASLt offers no {} algorithm for M={} N={} K={}: {}",
                                         report::to_string(dtype), shape.m, shape.n, shape.k, lib_.describe(status)));
    auto eb = static_cast<std::size_t>(cublaslt::element_bytes_of(dtype));
    const std::size_t x_bytes = static_cast<std::size_t>(shape.m * shape.k) * eb;
    const std::size_t w_bytes = static_cast<std::size_t>(shape.n * shape.k) * eb;
    const std::size_t y_bytes = static_cast<std::size_t>(shape.m * shape.n) * 4;
    // One weight read over and over stays in the L2 when it fits (an fp8 7168 x 4096 weight is
    // 28 MiB, H100's L2 50 MiB): the GEMMs would time the L2, not memory. Each call reads the next
    // of several copies that together exceed twice the L2, so the one it reads was evicted. X stays
    // one buffer: activations of a small M live in the L2 in a model too.
    const std::uint64_t budget = max_bytes();
    weight_stride_ = (w_bytes + kWeightAlign - 1) / kWeightAlign * kWeightAlign;
    const std::size_t copies = weight_copies(weight_stride_, dev_.l2_bytes,
                                             budget > x_bytes + y_bytes ? budget - x_bytes - y_bytes : 0);
    x_ = cuda::DeviceMemory(dev_.ordinal, x_bytes);
    weights_ = cuda::DeviceMemory(dev_.ordinal, copies * weight_stride_);
    weight_copies_ = copies;
    y_ = cuda::DeviceMemory(dev_.ordinal, y_bytes);
    fill_operand(dev_.ordinal, x_.get(), GemmOperand::x, shape.m * shape.k, dtype);
    fill_operand(dev_.ordinal, weights_.get(), GemmOperand::w, shape.n * shape.k, dtype);
    // The fills are pageable copies; a pageable cuMemcpyHtoD may return before its bytes land, and
    // the GEMMs run on a non-blocking stream that does not wait for the legacy one: wait for the
    // device before anything reads the buffers.
    cuda::synchronize_device(dev_.ordinal);
    // The other copies from the first, doubling on the device: log2(copies) copies, not one host
    // copy each (a 16 KiB weight takes 6,401 copies to exceed twice a 50 MiB L2).
    auto* base = static_cast<unsigned char*>(weights_.get());
    for (std::size_t have = 1; have < copies;) {
      std::size_t more = std::min(have, copies - have);
      cuda::copy_async(base + have * weight_stride_, dev_.ordinal, base, dev_.ordinal, more * weight_stride_, *stream_);
      have += more;
    }
    // One untimed call, with no hold kernel in front: under lazy loading (the default since CUDA
    // 12.2) cuBLASLt's kernel for this problem loads at its first launch and that load waits for
    // the context's running kernels, so a first launch behind the spinning hold kernel would stall
    // until the hold gives up (beta is 0: Y's contents do not matter to it). Then Y is poisoned,
    // so a timed GEMM that writes nothing fails the check.
    plan_->run(x_.get(), weights_.get(), y_.get(), workspace_.get(), workspace_bytes_, stream_->get());
    stream_->synchronize();
    cuda::memset_device(dev_.ordinal, y_.get(), 0xff, y_.size());  // NaN: no GEMM writes it
    cuda::synchronize_device(dev_.ordinal);
    shape_ = shape;
    const bool past_l2 = copies * weight_stride_ > 2 * dev_.l2_bytes;
    notes_.push_back(fmt::format("{} M={} N={} K={}: cuBLASLt {}; the weight rotates across {} cop{} ({}{} twice the "
                                 "{} L2{})",
                                 report::to_string(dtype), shape.m, shape.n, shape.k, plan_->chosen().text(), copies,
                                 copies == 1 ? "y" : "ies", format_bytes(copies * weight_stride_), past_l2 ? ", over" : ", under",
                                 format_bytes(dev_.l2_bytes),
                                 past_l2 ? "" : ": all the memory allows; GEMMs may read it from the L2, above memory bandwidth"));
  }

  double gemm_s(std::uint64_t count) override {
    cuda::DeviceGuard guard(dev_.ordinal);
    return events_around(count, [&] {
      for (std::uint64_t i = 0; i < count; ++i) {
        const void* w = static_cast<const unsigned char*>(weights_.get()) + next_weight_++ % weight_copies_ * weight_stride_;
        plan_->run(x_.get(), w, y_.get(), workspace_.get(), workspace_bytes_, stream_->get());
      }
    });
  }

  std::vector<double> read_outputs(const std::vector<OutputIndex>& indices) override {
    stream_->synchronize();
    std::vector<double> out;
    for (const auto& at : indices) {
      float v = 0;
      auto offset = static_cast<std::size_t>(at.row * shape_.n + at.col) * sizeof(float);
      cuda::copy_to_host(dev_.ordinal, &v, static_cast<const unsigned char*>(y_.get()) + offset, sizeof v);
      out.push_back(v);
    }
    return out;
  }

  void release() override {
    plan_.reset();
    x_ = {};
    weights_ = {};
    y_ = {};
    next_weight_ = 0;
  }

  std::vector<StreamVariant> stream_variants() const override {
    if (kernels_reason_) return {};
    return {StreamVariant{"device", std::nullopt}};
  }

  void prepare_stream(std::size_t, std::uint64_t bytes) override {
    release_stream();
    stream_bytes_ = std::max<std::uint64_t>(bytes / 16 * 16, 16);
    stream_buf_ = cuda::DeviceMemory(dev_.ordinal, stream_bytes_);
    sink_ = cuda::DeviceMemory(dev_.ordinal, sizeof(std::uint64_t));
    cuda::memset_device(dev_.ordinal, stream_buf_.get(), 0x5a, stream_bytes_);
    cuda::synchronize_device(dev_.ordinal);  // the legacy stream's memset, before the non-blocking stream reads
  }

  double stream_read_s(std::uint64_t passes) override {
    cuda::DeviceGuard guard(dev_.ordinal);
    return events_around(passes, [&] {
      for (std::uint64_t i = 0; i < passes; ++i)
        compute_kernels::launch_stream_read(dev_.ordinal, stream_->get(), stream_buf_.get(), stream_bytes_,
                                            static_cast<std::uint64_t*>(sink_.get()), 
                                            cuda::full_occupancy_blocks(dev_.sm_count, dev_.max_threads_per_sm,
                                                                        compute_kernels::kThreadsPerBlock));
    });
  }

  void release_stream() override {
    stream_buf_ = {};
    sink_ = {};
  }

  std::optional<std::string> launch_floor_unsupported() const override { return kernels_reason_; }

  double empty_launches_s(std::uint64_t count) override {
    cuda::DeviceGuard guard(dev_.ordinal);
    if (!launch_variants_noted_) note_launch_variants();
    return compute_kernels::empty_chain_s(dev_.ordinal, stream_->get(), count);
  }

  std::optional<double> graph_launch_s() override {
    if (!launch_variants_noted_) {
      cuda::DeviceGuard guard(dev_.ordinal);
      note_launch_variants();
    }
    return graph_per_kernel_s_;
  }

  std::pair<std::optional<double>, std::string> published_peak(ComputeDtype dtype) const override {
    return published_gpu_peak(dev_.name, dtype);
  }

  std::vector<std::string> notes() const override { return notes_; }

 private:
  // Events around `ops` operations that `queue` launches. Behind a hold kernel (as the copy
  // engine does) while the stream can take them all: the device then runs them back to back,
  // without the host's launch gaps, and the events time the device alone.
  template <class Queue>
  double events_around(std::uint64_t ops, Queue queue) {
    bool hold = !kernels_reason_ && ops <= kMaxQueuedOps;
    if (hold && !hold_) hold_.emplace(dev_.ordinal);
    cuda::Event start(dev_.ordinal, true), end(dev_.ordinal, true);
    struct Release {  // a failed launch must not leave the hold kernel spinning until its timeout
      cuda::HoldFlag* flag;
      ~Release() {
        if (flag) flag->release();
      }
    } release_on_exit{hold ? &*hold_ : nullptr};
    if (hold) {
      hold_->arm();
      hold_->hold(*stream_, kHoldTimeoutNs);
    }
    start.record(*stream_);
    queue();
    end.record(*stream_);
    if (hold) hold_->release();
    end.synchronize();
    if (hold && hold_->timed_out())
      throw std::runtime_error("the hold kernel timed out: queuing the GEMMs took over 10 s (driver stalled?)");
    return static_cast<double>(end.elapsed_ms_since(start)) * 1e-3;
  }

  // The launch floor's other two views, beside the back-to-back chain the sweep times.
  void note_launch_variants() {
    launch_variants_noted_ = true;
    double single = compute_kernels::empty_single_s(dev_.ordinal, stream_->get(), kSingleLaunches);
    std::string why;
    // The median of a few graph replays: one replay is a single event pair, at the mercy of jitter.
    std::vector<double> replays;
    for (int i = 0; i < kGraphReplays; ++i) {
      auto s = compute_kernels::empty_graph_s(dev_.ordinal, stream_->get(), kGraphChain, why);
      if (!s) break;
      replays.push_back(*s);
    }
    std::optional<double> graph;
    if (!replays.empty()) {
      std::nth_element(replays.begin(), replays.begin() + static_cast<std::ptrdiff_t>(replays.size() / 2), replays.end());
      graph = replays[replays.size() / 2];
      graph_per_kernel_s_ = *graph / static_cast<double>(kGraphChain);
    }
    notes_.push_back(fmt::format(
        "launch floor: one empty kernel launch-to-completion {} (host clock, median of {}); {} empty kernels in a CUDA "
        "graph: {} (median of {} graphs); launch_floor_us is the back-to-back chain without a graph",
        format_us(single * 1e6) + " us", kSingleLaunches, kGraphChain,
        graph ? fmt::format("{} us per kernel", format_us(*graph * 1e6 / static_cast<double>(kGraphChain))) : why,
        kGraphReplays));
  }

  cuda::DeviceInfo dev_;
  const cublaslt::Library& lib_;
  std::uint64_t workspace_bytes_;
  cublaslt::Handle handle_ = nullptr;
  std::unique_ptr<cuda::Stream> stream_;
  cuda::DeviceMemory workspace_;
  std::optional<std::string> simulated_;
  std::optional<std::string> kernels_reason_;
  std::optional<double> graph_per_kernel_s_;  // from note_launch_variants
  GemmShape shape_;
  cuda::DeviceMemory x_, y_;
  cuda::DeviceMemory weights_;  // weight_copies_ copies of W, weight_stride_ bytes apart
  std::size_t weight_copies_ = 1, weight_stride_ = 0, next_weight_ = 0;
  std::unique_ptr<cublaslt::GemmPlan> plan_;
  cuda::DeviceMemory stream_buf_, sink_;
  std::optional<cuda::HoldFlag> hold_;
  std::uint64_t stream_bytes_ = 0;
  mutable std::map<ComputeDtype, report::DtypeSupport> support_;
  std::vector<std::string> notes_;
  bool launch_variants_noted_ = false;
};

}  // namespace

namespace {

std::unique_ptr<ComputeEngine> open_cuda_compute_engine() {
  auto devices = cuda::enumerate_devices();  // UnsupportedError: no driver, too old, no GPU
  if (devices.empty()) throw UnsupportedError("no CUDA device");
  // A real cuBLASLt's runtime cannot drive the simulated driver, nor the simulated cuBLASLt a real one.
  bool driver_simulated = cu::driver().simulated.has_value();
  if (driver_simulated && !library_override(VendorLibrary::cublaslt))  // refused before loading a real one
    throw UnsupportedError(fmt::format("the CUDA driver {} is interprobe's simulator: point --cublaslt-lib / "
                                       "INTERPROBE_CUBLASLT_LIB at the simulated tests/sim/cublaslt/libcublasLt.so",
                                       cu::driver().path));
  const auto& lib = cublaslt::library();     // UnsupportedError: no cuBLASLt
  if (driver_simulated != lib.simulated.has_value())
    throw UnsupportedError(fmt::format(
        "the CUDA driver {} is {} but cuBLASLt {} is {}: point --cublaslt-lib / INTERPROBE_CUBLASLT_LIB at {}",
        cu::driver().path, driver_simulated ? "interprobe's simulator" : "real", lib.path,
        lib.simulated ? "interprobe's simulator" : "real",
        driver_simulated ? "the simulated tests/sim/cublaslt/libcublasLt.so" : "the system's libcublasLt.so"));
  return std::make_unique<CudaComputeEngine>(devices.front(), devices.size(), lib);
}

}  // namespace

std::unique_ptr<ComputeEngine> make_cuda_compute_engine() {
  try {
    return open_cuda_compute_engine();
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(fmt::format("cuda compute engine: {}", e.what()));
  }
}

std::unique_ptr<ComputeEngine> make_cuda_compute_engine(const ProbeContext&, const ComputeRequest&) {
  return make_cuda_compute_engine();
}

}  // namespace interprobe
