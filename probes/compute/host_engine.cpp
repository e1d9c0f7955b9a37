// The host compute engine over OpenBLAS (linked; a Debian package like hwloc).
#include "probes/compute/host_engine.hpp"

#include <cblas.h>
#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "probes/compute/cuda_gemm_plan.hpp"
#include "probes/compute/pattern.hpp"
#include "probes/compute/weight_only_gemm.hpp"
#include "probes/compute/roofline.hpp"
#include "common/fork_join_pool.hpp"
#include "common/errors.hpp"
#include "common/stopwatch.hpp"

namespace interprobe {

using report::ComputeDtype;

bool host_compute_available() { return true; }
std::string host_compute_missing_reason() { return ""; }

namespace {

unsigned allowed_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

bool has_flag(const std::string& flags, const char* flag) {
  std::string padded = " " + flags + " ";
  return padded.find(std::string(" ") + flag + " ") != std::string::npos;
}

// cblas_sbgemm exists only in OpenBLAS built with BUILD_BFLOAT16 (Debian's 0.3.21 is not, though
// its cblas.h declares it): looked up in the loaded library instead of linked.
using SbgemmFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint, float,
                          const bfloat16*, blasint, const bfloat16*, blasint, float, float*, blasint);

SbgemmFn find_sbgemm() { return reinterpret_cast<SbgemmFn>(dlsym(RTLD_DEFAULT, "cblas_sbgemm")); }

// The pattern's values are exact in bf16: its bits are the top half of the f32's.
std::uint16_t to_bf16(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return static_cast<std::uint16_t>(bits >> 16);
}

// "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64" -> "0.3.21".
std::string version_of(const std::string& config) {
  auto at = config.find("OpenBLAS ");
  if (at == std::string::npos) return config;
  auto start = at + 9, end = config.find(' ', start);
  return config.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

class OpenBlasEngine final : public ComputeEngine {
 public:
  explicit OpenBlasEngine(const HostComputeOptions& o) : options_(o) {
    threads_ = o.threads ? o.threads : allowed_cpus();
    openblas_set_num_threads(static_cast<int>(threads_));
    const char* config = openblas_get_config();
    config_ = config ? config : "";
    const char* core = openblas_get_corename();
    core_ = core ? core : "unknown";
    sbgemm_ = find_sbgemm();
  }

  ~OpenBlasEngine() override { openblas_set_num_threads(static_cast<int>(threads_)); }

  ComputeEngineInfo describe() const override {
    ComputeEngineInfo info;
    info.engine = report::ComputeEngineKind::host;
    info.library = "OpenBLAS";
    info.library_version = version_of(config_);
    if (!options_.cpu_model.empty()) info.device = options_.cpu_model;
    info.threads = threads_;
    info.notes.push_back(fmt::format("OpenBLAS build: {} (kernels for core {})", config_, core_));
    return info;
  }

  ComputeTimingHints timing() const override {
    ComputeTimingHints h;
    h.min_sample_us = 2000;  // host clocks are fine-grained; 2 ms keeps the scheduler's noise small
    h.max_ops_per_sample = 1u << 14;
    h.peak_size = 2048;
    h.stream_bytes = 256ull << 20;
    return h;
  }

  report::DtypeSupport supports(ComputeDtype dtype) const override {
    report::DtypeSupport s;
    s.dtype = dtype;
    switch (dtype) {
      case ComputeDtype::f32:
        s.supported = true;
        s.reason = "cblas_sgemm";
        break;
      case ComputeDtype::bf16:
        if (native_bf16()) {
          s.supported = true;
          s.reason = fmt::format("cblas_sbgemm; the CPU has {}", has_flag(options_.cpu_flags, "amx_bf16") ? "amx_bf16" : "avx512_bf16");
        } else {
          s = weight_only(dtype, sbgemm_ ? "the CPU has neither avx512_bf16 nor amx_bf16 (/proc/cpuinfo flags), so "
                                           "cblas_sbgemm would emulate"
                                         : fmt::format("this OpenBLAS ({}) has no cblas_sbgemm (it needs BUILD_BFLOAT16=1)",
                                                       version_of(config_)));
        }
        break;
      case ComputeDtype::f16: s.reason = "OpenBLAS has no half-precision GEMM in the CBLAS interface"; break;
      case ComputeDtype::fp8_e4m3: s = weight_only(dtype, "no x86 CPU multiplies fp8, and OpenBLAS has no fp8 GEMM"); break;
    }
    return s;
  }

  std::optional<std::string> launch_floor_unsupported() const override { return std::nullopt; }

  // An empty job through the pool the weight-only GEMMs run on: fork to every thread, join.
  double empty_launches_s(std::uint64_t count) override {
    const std::function<void(unsigned)> nothing = [](unsigned) {};
    Stopwatch clock;
    for (std::uint64_t i = 0; i < count; ++i) pool().run(nothing);
    return clock.elapsed_s();
  }

  std::uint64_t max_bytes() const override { return options_.memory_budget_bytes; }

  void prepare(const GemmShape& shape, ComputeDtype dtype) override {
    if (!supports(dtype).supported) throw UnsupportedError(fmt::format("host engine: dtype {} unsupported", to_string(dtype)));
    auto mk = static_cast<std::size_t>(shape.m * shape.k), nk = static_cast<std::size_t>(shape.n * shape.k);
    // The weights of consecutive M at one shape are the same: fill them once.
    bool same_weights = shape.n == filled_.n && shape.k == filled_.k && dtype == filled_dtype_;
    if (weight_only_dtype(dtype)) {
      if (!same_weights) {
        std::vector<float>().swap(w_);
        weight_only_.set_weights(dtype, encoded_weights(dtype, nk), shape.n, shape.k, threads_);
      }
      fill(x_, xb_, GemmOperand::x, mk, ComputeDtype::f32);
    } else {
      if (!same_weights) {
        weight_only_.clear();
        fill(w_, wb_, GemmOperand::w, nk, dtype);
      }
      fill(x_, xb_, GemmOperand::x, mk, dtype);
    }
    filled_ = shape;
    filled_dtype_ = dtype;
    y_.assign(static_cast<std::size_t>(shape.m * shape.n), std::numeric_limits<float>::quiet_NaN());
    shape_ = shape;
    dtype_ = dtype;
  }

  double gemm_s(std::uint64_t count) override {
    auto m = static_cast<blasint>(shape_.m), n = static_cast<blasint>(shape_.n), k = static_cast<blasint>(shape_.k);
    if (weight_only_dtype(dtype_)) {
      openblas_set_num_threads(1);  // the pool's threads are the parallelism
      Stopwatch clock;
      for (std::uint64_t i = 0; i < count; ++i) weight_only_.run(pool(), x_.data(), shape_.m, y_.data());
      double seconds = clock.elapsed_s();
      openblas_set_num_threads(static_cast<int>(threads_));
      return seconds;
    }
    Stopwatch clock;
    for (std::uint64_t i = 0; i < count; ++i) {
      if (dtype_ == ComputeDtype::bf16)
        sbgemm_(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, xb_.data(), k, wb_.data(), k, 0.0f, y_.data(), n);
      else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x_.data(), k, w_.data(), k, 0.0f, y_.data(), n);
    }
    return clock.elapsed_s();
  }

  std::vector<double> read_outputs(const std::vector<OutputIndex>& indices) override {
    std::vector<double> out;
    for (const auto& i : indices) out.push_back(y_.at(static_cast<std::size_t>(i.row * shape_.n + i.col)));
    return out;
  }

  void release() override {
    std::vector<float>().swap(x_);
    std::vector<float>().swap(w_);
    std::vector<float>().swap(y_);
    std::vector<std::uint16_t>().swap(xb_);
    std::vector<std::uint16_t>().swap(wb_);
    weight_only_.clear();
    filled_ = {};
  }

  std::vector<StreamVariant> stream_variants() const override {
    std::vector<StreamVariant> v{{"dram_1_thread", 1}};
    if (threads_ > 1) v.push_back({"dram_all_threads", static_cast<std::int64_t>(threads_)});
    return v;
  }

  void prepare_stream(std::size_t variant, std::uint64_t bytes) override {
    stream_threads_ = static_cast<unsigned>(stream_variants().at(variant).threads.value_or(1));
    stream_.assign(bytes / sizeof(std::uint64_t), 0);
    for (std::size_t i = 0; i < stream_.size(); ++i) stream_[i] = i * 0x9e3779b97f4a7c15ull;  // touched: real pages
  }

  double stream_read_s(std::uint64_t passes) override {
    std::vector<std::thread> workers;
    std::vector<std::uint64_t> sums(stream_threads_ * 8, 0);  // 64 bytes apart: no false sharing
    std::size_t slice = stream_.size() / stream_threads_;
    Stopwatch clock;
    for (unsigned t = 0; t < stream_threads_; ++t)
      workers.emplace_back([&, t] {
        const std::uint64_t* begin = stream_.data() + t * slice;
        std::size_t count = t + 1 == stream_threads_ ? stream_.size() - t * slice : slice;
        sums[t * 8] = read_slice(begin, count, passes);
      });
    for (auto& w : workers) w.join();
    double seconds = clock.elapsed_s();
    for (auto s : sums) sink_ ^= s;
    return seconds;
  }

  void release_stream() override { std::vector<std::uint64_t>().swap(stream_); }

 private:
  // XOR of every word: the compiler vectorizes it, and the result is used so the reads stay.
  static std::uint64_t read_slice(const std::uint64_t* __restrict p, std::size_t count, std::uint64_t passes) {
    std::uint64_t acc = 0;
    for (std::uint64_t pass = 0; pass < passes; ++pass)
      for (std::size_t i = 0; i < count; ++i) acc ^= p[i];
    return acc;
  }

  bool native_bf16() const {
    return sbgemm_ && (has_flag(options_.cpu_flags, "amx_bf16") || has_flag(options_.cpu_flags, "avx512_bf16"));
  }

  bool weight_only_dtype(ComputeDtype dtype) const {
    return dtype == ComputeDtype::fp8_e4m3 || (dtype == ComputeDtype::bf16 && !native_bf16());
  }

  report::DtypeSupport weight_only(ComputeDtype dtype, const std::string& why) const {
    report::DtypeSupport s;
    s.dtype = dtype;
    s.supported = true;
    s.weight_only = true;
    s.reason = fmt::format("weight-only: {} weights decoded to f32 in cache-sized blocks, multiplied with cblas_sgemm on {} "
                           "thread{} ({})",
                           to_string(dtype), threads_, threads_ == 1 ? "" : "s", why);
    return s;
  }

  // The weight pattern in `dtype`. The pattern takes a handful of values: each is encoded once and
  // its bytes copied, so a gigabyte of weights costs a table lookup per element (and never exists
  // as f32 on the side).
  static std::vector<unsigned char> encoded_weights(ComputeDtype dtype, std::size_t count) {
    struct Encoded {
      float value;
      std::vector<unsigned char> bytes;
    };
    std::vector<Encoded> seen;
    const std::size_t width = cublaslt::encode(dtype, {0.0f}).size();
    std::vector<unsigned char> out(count * width);
    for (std::size_t i = 0; i < count; ++i) {
      float v = compute_pattern_value(GemmOperand::w, static_cast<std::int64_t>(i));
      auto it = std::find_if(seen.begin(), seen.end(), [&](const Encoded& e) { return e.value == v; });
      if (it == seen.end()) it = seen.insert(seen.end(), Encoded{v, cublaslt::encode(dtype, {v})});
      std::memcpy(out.data() + i * width, it->bytes.data(), width);
    }
    return out;
  }

  // The threads of a CPU inference runtime: they spin about 50 us between operations before they
  // sleep, so back-to-back operations find them awake (ggml's threadpool, OpenMP's parallel
  // regions) and an idle pool costs no CPU. An empty job is the launch floor.
  ForkJoinPool& pool() {
    constexpr int kRuntimeSpins = 20000;
    if (!pool_) pool_ = std::make_unique<ForkJoinPool>(threads_, kRuntimeSpins);
    return *pool_;
  }

  static void fill(std::vector<float>& f32, std::vector<std::uint16_t>& bf16, GemmOperand operand, std::size_t count,
                   ComputeDtype dtype) {
    if (dtype == ComputeDtype::bf16) {
      bf16.resize(count);
      for (std::size_t i = 0; i < count; ++i) bf16[i] = to_bf16(compute_pattern_value(operand, static_cast<std::int64_t>(i)));
    } else {
      f32.resize(count);
      for (std::size_t i = 0; i < count; ++i) f32[i] = compute_pattern_value(operand, static_cast<std::int64_t>(i));
    }
  }

  HostComputeOptions options_;
  unsigned threads_ = 1;
  std::string config_, core_;
  SbgemmFn sbgemm_ = nullptr;
  GemmShape shape_, filled_;
  ComputeDtype dtype_ = ComputeDtype::f32, filled_dtype_ = ComputeDtype::f32;
  std::vector<float> x_, w_, y_;
  std::vector<std::uint16_t> xb_, wb_;
  std::vector<std::uint64_t> stream_;
  unsigned stream_threads_ = 1;
  std::unique_ptr<ForkJoinPool> pool_;
  WeightOnlyGemm weight_only_;
  std::uint64_t sink_ = 0;
};

}  // namespace

std::unique_ptr<ComputeEngine> make_host_compute_engine(const HostComputeOptions& options) {
  return std::make_unique<OpenBlasEngine>(options);
}

}  // namespace interprobe
