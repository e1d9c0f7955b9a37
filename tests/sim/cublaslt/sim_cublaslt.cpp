// The simulated libcublasLt.so: the entry points of probes/compute/cublaslt_api.hpp over the
// simulated libcuda's devices and streams (tests/sim/cuda), matmuls computed on the host in f32.
// Like the real library (whose CUDA runtime dlopens libcuda.so.1), it uses the libcuda already
// loaded in the process; it works only beside the simulated one. Tests only: never installed.
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <new>
#include <string>

#include "probes/compute/cublaslt_api.hpp"
#include "sim_config.hpp"
#include "sim_matmul.hpp"

using namespace interprobe::sim;
namespace lt = interprobe::cublaslt;
namespace cu = interprobe::cu;

struct cublasLtContext {
  const SimConfig* config = nullptr;
  int (*current_device)() = nullptr;
  int (*enqueue)(cu::Stream, void (*)(void*), void*, double) = nullptr;
  std::uint64_t (*write_epoch)() = nullptr;
  int (*lazy_load)(const char*) = nullptr;
};

namespace {

struct Desc {
  int compute = 0, scale = 0;
  bool trans_a = false, trans_b = false;
};
static_assert(sizeof(Desc) <= sizeof(lt::MatmulDescOpaque));

struct Preference {
  std::uint64_t max_workspace = 0;
};

// What an algorithm carries (cublasLtMatmulAlgo_t is 8 opaque words).
enum AlgoWord { kId, kTile, kSplitK, kStages, kWorkspace };

Matrix& matrix(lt::MatrixLayout l) { return *reinterpret_cast<Matrix*>(l); }
Desc& desc(lt::MatmulDesc d) { return *reinterpret_cast<Desc*>(d); }

// The problem a descriptor and four layouts describe: kSuccess, or why it cannot run here.
struct Problem {
  lt::Status status = lt::kSuccess;
  std::uint64_t m = 0, n = 0, k = 0;
  ElementType in = ElementType::f32;
};

Problem check(const cublasLtContext* h, const Desc& op, const Matrix& a, const Matrix& b, const Matrix& c,
              const Matrix& d) {
  Problem p;
  if (!h || h->current_device() < 0) return {lt::kNotInitialized};
  if (op.compute != lt::kCompute32F || op.scale != lt::kR32F) return {lt::kNotSupported};
  if (a.type != b.type || c.type != ElementType::f32 || d.type != ElementType::f32) return {lt::kNotSupported};
  if (a.type == ElementType::f32) return {lt::kNotSupported};  // the simulator has no TF32/FP32 kernels
  p.m = op.trans_a ? a.cols : a.rows;
  p.k = op.trans_a ? a.rows : a.cols;
  p.n = op.trans_b ? b.rows : b.cols;
  std::uint64_t kb = op.trans_b ? b.cols : b.rows;
  if (kb != p.k || c.rows != p.m || c.cols != p.n || d.rows != p.m || d.cols != p.n) return {lt::kInvalidValue};
  p.in = a.type;
  const DeviceSpec& dev = h->config->devices.at(static_cast<std::size_t>(h->current_device()));
  int cc = dev.cc_major * 10 + dev.cc_minor;
  // BF16 tensor cores arrived with Ampere (8.0), FP8 with Ada and Hopper (8.9).
  if (p.in == ElementType::bf16 && cc < 80) return {lt::kNotSupported};
  if (p.in == ElementType::fp8_e4m3) {
    if (cc < 89) return {lt::kNotSupported};
    // FP8 runs only "TN" (A transposed, B not) with 16-element aligned leading dimensions.
    if (!op.trans_a || op.trans_b || a.ld % 16 || b.ld % 16 || d.ld % 16) return {lt::kNotSupported};
  }
  return p;
}

double tflops_of(const CublasLtSpec& s, ElementType t) {
  return t == ElementType::fp8_e4m3 ? s.fp8_tflops : t == ElementType::bf16 ? s.bf16_tflops : s.f16_tflops;
}

// A device's L2 as GEMMs leave it: the buffers they read or wrote, most recent first, at most the
// device's L2 size in all (least recently used out first). A buffer larger than the L2 passes
// through it and leaves nothing behind. Only GEMMs touch this model: copies and kernels of the
// simulated libcuda do not evict (they never run between the GEMMs a sweep times).
class L2Model {
 public:
  // Whether [p, p + bytes) is all still in the L2; then makes it the most recent.
  bool touch(const void* p, std::uint64_t bytes, std::uint64_t l2_bytes) {
    auto it = std::find_if(lines_.begin(), lines_.end(), [&](const auto& l) { return l.first == p; });
    bool hit = it != lines_.end() && it->second >= bytes;
    if (it != lines_.end()) {
      held_ -= it->second;
      lines_.erase(it);
    }
    if (bytes > l2_bytes) {
      lines_.clear();
      held_ = 0;
      return false;
    }
    lines_.emplace_front(p, bytes);
    held_ += bytes;
    while (held_ > l2_bytes) {
      held_ -= lines_.back().second;
      lines_.pop_back();
    }
    return hit;
  }

 private:
  std::list<std::pair<const void*, std::uint64_t>> lines_;
  std::uint64_t held_ = 0;
};

// Device seconds of one matmul under the description's model: A and B come from the L2 (at
// l2_gbps) when an earlier GEMM on the device left them there, else from memory
// (links.device.gbps), as do C and D.
double model_seconds(const SimConfig& c, int device, const Problem& p, const void* pa, const void* pb, const void* pd,
                     bool reads_c) {
  static std::mutex m;
  static std::map<int, L2Model> l2;
  const std::uint64_t l2_bytes = c.devices.at(static_cast<std::size_t>(device)).l2_bytes;
  double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  auto eb = static_cast<std::uint64_t>(element_bytes(p.in));
  std::uint64_t a_bytes = eb * p.m * p.k, b_bytes = eb * p.k * p.n, d_bytes = 4 * p.m * p.n;
  double memory_s = 0;
  {
    std::lock_guard lock(m);
    L2Model& cache = l2[device];
    memory_s += static_cast<double>(a_bytes) / ((cache.touch(pa, a_bytes, l2_bytes) ? c.l2_gbps : c.device.gbps) * 1e9);
    memory_s += static_cast<double>(b_bytes) / ((cache.touch(pb, b_bytes, l2_bytes) ? c.l2_gbps : c.device.gbps) * 1e9);
    cache.touch(pd, d_bytes, l2_bytes);
  }
  memory_s += static_cast<double>(d_bytes) * (reads_c ? 2 : 1) / (c.device.gbps * 1e9);
  return c.cublaslt.latency_us * 1e-6 + std::max(flops / (tflops_of(c.cublaslt, p.in) * 1e12), memory_s);
}

void run_job(void* data) {
  auto* job = static_cast<MatmulJob*>(data);
  run_matmul(*job);
  delete job;
}

}  // namespace

#define SIM_API __attribute__((visibility("default")))

extern "C" {

SIM_API const char* interprobe_sim_version() { return "interprobe-sim 1"; }

SIM_API lt::Status cublasLtCreate(lt::Handle* out) {
  if (!out) return lt::kInvalidValue;
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!cuda) return lt::kNotInitialized;
  auto config = reinterpret_cast<const void* (*)()>(dlsym(cuda, "interprobe_sim_config"));
  auto* h = new cublasLtContext;
  h->current_device = reinterpret_cast<int (*)()>(dlsym(cuda, "interprobe_sim_current_device"));
  h->enqueue = reinterpret_cast<int (*)(cu::Stream, void (*)(void*), void*, double)>(dlsym(cuda, "interprobe_sim_enqueue"));
  h->write_epoch = reinterpret_cast<std::uint64_t (*)()>(dlsym(cuda, "interprobe_sim_write_epoch"));
  h->lazy_load = reinterpret_cast<int (*)(const char*)>(dlsym(cuda, "interprobe_sim_lazy_load"));
  if (config) h->config = static_cast<const SimConfig*>(config());
  dlclose(cuda);  // RTLD_NOLOAD took a reference; the process keeps the library loaded
  if (!h->config || !h->current_device || !h->enqueue || !h->write_epoch || !h->lazy_load) {
    delete h;
    return lt::kNotInitialized;  // a real libcuda: this simulator cannot drive it
  }
  *out = h;
  return lt::kSuccess;
}

SIM_API lt::Status cublasLtDestroy(lt::Handle h) {
  delete h;
  return lt::kSuccess;
}

SIM_API std::size_t cublasLtGetVersion() {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto config = cuda ? reinterpret_cast<const void* (*)()>(dlsym(cuda, "interprobe_sim_config")) : nullptr;
  std::size_t v = config ? static_cast<const SimConfig*>(config())->cublaslt.version : CublasLtSpec{}.version;
  if (cuda) dlclose(cuda);
  return v;
}

SIM_API const char* cublasLtGetStatusString(lt::Status s) {
  switch (s) {
    case lt::kSuccess: return "the operation completed successfully";
    case lt::kNotInitialized: return "the library was not initialized";
    case lt::kInvalidValue: return "an invalid numeric value was used as an argument";
    case lt::kNotSupported: return "the functionality requested is not supported";
    case lt::kExecutionFailed: return "the GPU program failed to execute";
    default: return "unknown error";
  }
}

SIM_API lt::Status cublasLtMatmulDescCreate(lt::MatmulDesc* out, int compute, int scale) {
  if (!out) return lt::kInvalidValue;
  auto* d = new lt::MatmulDescOpaque{};
  new (d) Desc{compute, scale, false, false};
  *out = d;
  return lt::kSuccess;
}

SIM_API lt::Status cublasLtMatmulDescSetAttribute(lt::MatmulDesc d, int attr, const void* buf, std::size_t size) {
  if (!d || !buf || size != sizeof(std::int32_t)) return lt::kInvalidValue;
  std::int32_t v;
  std::memcpy(&v, buf, sizeof v);
  if (v != lt::kOpN && v != lt::kOpT) return lt::kInvalidValue;
  if (attr == lt::kDescTransA) desc(d).trans_a = v == lt::kOpT;
  else if (attr == lt::kDescTransB) desc(d).trans_b = v == lt::kOpT;
  else return lt::kInvalidValue;
  return lt::kSuccess;
}

SIM_API lt::Status cublasLtMatmulDescDestroy(lt::MatmulDesc d) {
  delete d;
  return lt::kSuccess;
}

SIM_API lt::Status cublasLtMatrixLayoutCreate(lt::MatrixLayout* out, int type, std::uint64_t rows, std::uint64_t cols,
                                              std::int64_t ld) {
  if (!out || !known_element_type(type) || ld < static_cast<std::int64_t>(rows)) return lt::kInvalidValue;
  auto* l = new lt::MatrixLayoutOpaque{};
  static_assert(sizeof(Matrix) <= sizeof(lt::MatrixLayoutOpaque));
  new (l) Matrix{static_cast<ElementType>(type), rows, cols, ld};
  *out = l;
  return lt::kSuccess;
}

SIM_API lt::Status cublasLtMatrixLayoutDestroy(lt::MatrixLayout l) {
  delete l;
  return lt::kSuccess;
}

SIM_API lt::Status cublasLtMatmulPreferenceCreate(lt::MatmulPreference* out) {
  if (!out) return lt::kInvalidValue;
  *out = new lt::MatmulPreferenceOpaque{};
  return lt::kSuccess;
}

SIM_API lt::Status cublasLtMatmulPreferenceSetAttribute(lt::MatmulPreference p, int attr, const void* buf,
                                                        std::size_t size) {
  if (!p || !buf || attr != lt::kPrefMaxWorkspaceBytes || size != sizeof(std::uint64_t)) return lt::kInvalidValue;
  std::memcpy(&p->data[0], buf, sizeof(std::uint64_t));
  return lt::kSuccess;
}

SIM_API lt::Status cublasLtMatmulPreferenceDestroy(lt::MatmulPreference p) {
  delete p;
  return lt::kSuccess;
}

SIM_API lt::Status cublasLtMatmulAlgoGetHeuristic(lt::Handle h, lt::MatmulDesc op, lt::MatrixLayout a,
                                                  lt::MatrixLayout b, lt::MatrixLayout c, lt::MatrixLayout d,
                                                  lt::MatmulPreference pref, int requested, lt::HeuristicResult* out,
                                                  int* returned) {
  if (!op || !a || !b || !c || !d || !pref || requested <= 0 || !out || !returned) return lt::kInvalidValue;
  *returned = 0;
  Problem p = check(h, desc(op), matrix(a), matrix(b), matrix(c), matrix(d));
  if (p.status != lt::kSuccess) return p.status;
  std::uint64_t max_workspace = pref->data[0];
  int count = std::min(requested, h->config->cublaslt.algos);
  for (int i = 0; i < count; ++i) {
    lt::HeuristicResult r{};
    // The simulator's algorithms: a plain tile first, then a split-K one that wants workspace.
    r.algo.data[kId] = p.in == ElementType::fp8_e4m3 ? 66 : 21;
    r.algo.data[kTile] = i == 0 ? 20 : 15;
    r.algo.data[kSplitK] = i == 0 ? 1 : 4;
    r.algo.data[kStages] = i == 0 ? 22 : 19;
    r.algo.data[kWorkspace] = i == 0 ? 0 : std::min<std::uint64_t>(max_workspace, std::uint64_t{1} << 20);
    r.workspace_size = r.algo.data[kWorkspace];
    r.state = lt::kSuccess;
    r.waves_count = static_cast<float>(p.m * p.n) / (128.0f * 128.0f * 132.0f);
    out[(*returned)++] = r;
  }
  return lt::kSuccess;
}

SIM_API lt::Status cublasLtMatmulAlgoConfigGetAttribute(const lt::MatmulAlgo* algo, int attr, void* buf,
                                                        std::size_t size, std::size_t* written) {
  if (!algo || !buf) return lt::kInvalidValue;
  AlgoWord word = attr == lt::kAlgoConfigId ? kId
                  : attr == lt::kAlgoConfigTileId ? kTile
                  : attr == lt::kAlgoConfigSplitkNum ? kSplitK
                  : attr == lt::kAlgoConfigStagesId ? kStages
                                                    : kWorkspace;
  if (word == kWorkspace || size != sizeof(std::uint32_t)) return lt::kInvalidValue;
  auto v = static_cast<std::uint32_t>(algo->data[word]);
  std::memcpy(buf, &v, sizeof v);
  if (written) *written = sizeof v;
  return lt::kSuccess;
}

SIM_API lt::Status cublasLtMatmul(lt::Handle h, lt::MatmulDesc op, const void* alpha, const void* pa, lt::MatrixLayout a,
                                  const void* pb, lt::MatrixLayout b, const void* beta, const void* pc,
                                  lt::MatrixLayout c, void* pd, lt::MatrixLayout d, const lt::MatmulAlgo* algo,
                                  void* workspace, std::size_t workspace_bytes, cu::Stream stream) {
  if (!op || !alpha || !beta || !pa || !pb || !pd || !a || !b || !c || !d) return lt::kInvalidValue;
  Problem p = check(h, desc(op), matrix(a), matrix(b), matrix(c), matrix(d));
  if (p.status != lt::kSuccess) return p.status;
  if (algo && algo->data[kWorkspace] > 0 && (!workspace || workspace_bytes < algo->data[kWorkspace]))
    return lt::kInvalidValue;
  // The kernel for this problem loads at its first launch in the context (lazy loading, CUDA 12.2+)
  // and waits for the context's running kernels: behind a spinning kernel the call blocks, as on a GPU.
  const std::string kernel = "matmul " + std::to_string(static_cast<int>(p.in)) + " " + std::to_string(p.m) + "x" +
                             std::to_string(p.n) + "x" + std::to_string(p.k);
  if (h->lazy_load(kernel.c_str()) != 0) return lt::kExecutionFailed;
  auto* job = new MatmulJob;
  job->a = matrix(a), job->b = matrix(b), job->c = matrix(c), job->d = matrix(d);
  job->trans_a = desc(op).trans_a, job->trans_b = desc(op).trans_b;
  job->pa = pa, job->pb = pb, job->pc = pc ? pc : pd, job->pd = pd;
  std::memcpy(&job->alpha, alpha, sizeof(float));
  std::memcpy(&job->beta, beta, sizeof(float));
  job->corrupt = h->config->faults.corrupt_matmul;
  job->m = p.m, job->n = p.n, job->k = p.k;
  job->write_epoch = h->write_epoch;
  double seconds = model_seconds(*h->config, h->current_device(), p, pa, pb, pd, job->beta != 0);
  if (h->enqueue(stream, run_job, job, seconds) != 0) {
    delete job;
    return lt::kExecutionFailed;
  }
  return lt::kSuccess;
}

}  // extern "C"
