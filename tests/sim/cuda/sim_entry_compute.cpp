// The simulated libcuda's CUDA graph entry points (stream capture, instantiate, launch) and the
// hooks the simulated libcublasLt.so uses to run matmuls on this library's streams, as the real
// cuBLASLt runs its kernels on the driver's. Tests only: never installed.
#include <cstdint>
#include <functional>
#include <vector>

#include "probes/gpu/cuda_driver_api.hpp"
#include "sim_state.hpp"

using namespace interprobe::sim;
namespace cu = interprobe::cu;

struct CUgraph_st;
struct CUgraphExec_st;

namespace {

using Ops = std::vector<std::function<void(Stream&)>>;

Stream* stream_of(cu::Stream s) {
  auto v = reinterpret_cast<std::uintptr_t>(s);
  return v <= 2 ? nullptr : reinterpret_cast<Stream*>(s);
}

}  // namespace

#define SIM_API __attribute__((visibility("default")))

extern "C" {

// The description this library simulates (an interprobe::sim::SimConfig, same build).
SIM_API const void* interprobe_sim_config() { return &state().config; }

// The device of the calling thread's current context; -1 without one.
SIM_API int interprobe_sim_current_device() {
  Context* c = current_context();
  return c ? c->device : -1;
}

// How many writes to memory the simulated driver has done (State::write_epoch).
SIM_API std::uint64_t interprobe_sim_write_epoch() { return state().write_epoch.load(std::memory_order_acquire); }

// A library (the simulated cuBLASLt) about to launch its kernel `key` for the first time in the
// current context: under lazy loading the kernel loads now and waits for the context's running
// kernels, as cuModuleGetFunction does here (a library's kernels load lazily too: cuBLAS ships
// them in fatbins the driver loads on first use). 0, or CUDA_ERROR_INVALID_CONTEXT without one.
SIM_API int interprobe_sim_lazy_load(const char* key) {
  Context* ctx = current_context();
  if (!ctx) return cu::kErrorInvalidContext;
  if (!key) return cu::kErrorInvalidValue;
  if (state().lazy_loading && ctx->loaded_library_kernels.insert(key).second) wait_context_idle(ctx);
  return cu::kSuccess;
}

// Runs fn(data) on the stream's worker, then advances its device clock by `device_s` seconds;
// without a stream (0 or a legacy handle): at once on this thread. 0 on success.
SIM_API int interprobe_sim_enqueue(cu::Stream h, void (*fn)(void*), void* data, double device_s) {
  if (!fn || device_s < 0) return cu::kErrorInvalidValue;
  if (Stream* s = stream_of(h)) {
    s->enqueue([fn, data, device_s](Stream& on) {
      fn(data);
      advance_clock(&on, device_s);
    });
    return cu::kSuccess;
  }
  fn(data);
  return cu::kSuccess;
}

// Stream capture records what the stream would run; a graph launch queues it again, as one entry.
SIM_API cu::Result cuStreamBeginCapture_v2(cu::Stream h, int) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  Stream* s = stream_of(h);
  if (!s || s->capture) return cu::kErrorInvalidValue;
  s->capture = new Ops;
  return cu::kSuccess;
}

SIM_API cu::Result cuStreamEndCapture(cu::Stream h, CUgraph_st** graph) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  Stream* s = stream_of(h);
  if (!s || !s->capture || !graph) return cu::kErrorInvalidValue;
  *graph = reinterpret_cast<CUgraph_st*>(s->capture);
  s->capture = nullptr;
  return cu::kSuccess;
}

SIM_API cu::Result cuGraphInstantiateWithFlags(CUgraphExec_st** exec, CUgraph_st* graph, unsigned long long) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  if (!exec || !graph) return cu::kErrorInvalidValue;
  *exec = reinterpret_cast<CUgraphExec_st*>(new Ops(*reinterpret_cast<Ops*>(graph)));
  return cu::kSuccess;
}

SIM_API cu::Result cuGraphLaunch(CUgraphExec_st* exec, cu::Stream h) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  Stream* s = stream_of(h);
  if (!exec || !s) return cu::kErrorInvalidValue;
  // One entry on the stream: the device runs a graph's kernels back to back, whatever the host
  // does meanwhile (per-kernel enqueues would let a slow host, e.g. under ASan, gap them).
  s->enqueue([ops = *reinterpret_cast<Ops*>(exec)](Stream& on) {
    for (const auto& op : ops) {
      op(on);
      if (on.abandoned) return;
    }
  });
  return cu::kSuccess;
}

SIM_API cu::Result cuGraphExecDestroy(CUgraphExec_st* exec) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  delete reinterpret_cast<Ops*>(exec);
  return cu::kSuccess;
}

SIM_API cu::Result cuGraphDestroy(CUgraph_st* graph) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  delete reinterpret_cast<Ops*>(graph);
  return cu::kSuccess;
}

}  // extern "C"
