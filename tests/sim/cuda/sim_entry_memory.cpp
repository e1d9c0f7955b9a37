// The simulated libcuda's memory, copy, stream, event, module and launch entry points.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "probes/gpu/cuda_driver_api.hpp"
#include "sim_kernels.hpp"
#include "sim_state.hpp"

using namespace interprobe;
using namespace interprobe::sim;
namespace cu = interprobe::cu;

namespace {

constexpr std::size_t kAlignment = 256;  // what cuMemAlloc guarantees

Stream* stream_of(cu::Stream s) {
  auto v = reinterpret_cast<std::uintptr_t>(s);
  return v <= 2 ? nullptr : reinterpret_cast<Stream*>(s);  // 0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD
}

// A call on a stream: the driver initialized; the NULL/legacy stream is the current context's, so
// it needs one (a created stream carries its own context).
cu::Result require_stream(cu::Stream s) {
  if (stream_of(s)) return static_cast<cu::Result>(require_initialized());
  Context* ctx = nullptr;
  return static_cast<cu::Result>(require_context(ctx));
}
Context* context_of(cu::Context c) { return reinterpret_cast<Context*>(c); }
void* to_ptr(cu::DevicePtr p) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)); }
cu::DevicePtr from_ptr(const void* p) { return static_cast<cu::DevicePtr>(reinterpret_cast<std::uintptr_t>(p)); }

void* aligned_bytes(std::size_t bytes) {
  return std::aligned_alloc(kAlignment, (std::max<std::size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment);
}

void drain_legacy();

// Work on a created stream goes to its worker; work on the legacy stream runs now on the calling
// thread, after what the legacy stream's worker still holds (lagging copies, memsets).
cu::Result submit(cu::Stream s, std::function<void(Stream*)> op) {
  if (Stream* stream = stream_of(s)) {
    stream->enqueue([op](Stream& on) { op(&on); });
  } else {
    drain_legacy();
    op(nullptr);
  }
  return cu::kSuccess;
}

cu::Result copy_async(void* dst, const void* src, std::size_t bytes, cu::Stream s, bool peer_allowed) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  State& st = state();
  CopyRoute r = route(st.locate(src), st.locate(dst), peer_allowed);
  bool corrupt = r.peer && st.config.faults.corrupt_peer_copies;
  bool hang = r.peer && st.config.faults.hang_peer_copies;
  return submit(s, [=](Stream* on) { timed_copy(on, dst, src, bytes, r.link, corrupt, hang); });
}

// A CUevent is a handle holding one reference to its Event; every queued record or wait holds
// another. CUDA lets a program destroy an event whose record has not run yet (its resources go
// once it completes): a sweep that stops at a driver error does, and an Event deleted under the
// queued record was a use-after-free in the stream's worker (a hang in 1 of ~10 ECC runs).
struct EventHandle {
  std::shared_ptr<Event> event = std::make_shared<Event>();
};
EventHandle* handle_of(cu::Event e) { return reinterpret_cast<EventHandle*>(e); }
Event* event_of(cu::Event e) { return e ? handle_of(e)->event.get() : nullptr; }
std::shared_ptr<Event> shared_event(cu::Event e) { return handle_of(e)->event; }

// The current context's legacy default stream: only the lagging pageable copies use a worker for
// it; everything else on stream 0 still runs at once on the calling thread.
Stream* legacy_stream() {
  Context* ctx = current_context();
  if (!ctx) return nullptr;
  State& st = state();
  std::lock_guard lock(st.streams_m);
  Stream*& slot = st.legacy[ctx->device];
  if (!slot) {
    slot = new Stream(ctx);
    st.streams.insert(slot);
  }
  return slot;
}

// Synchronous copies and memsets are ordered after earlier work of the legacy stream.
void drain_legacy() {
  Context* ctx = current_context();
  if (!ctx) return;
  Stream* legacy = nullptr;
  {
    std::lock_guard lock(state().streams_m);
    auto it = state().legacy.find(ctx->device);
    if (it != state().legacy.end()) legacy = it->second;
  }
  if (legacy) legacy->synchronize();
}

// An uncorrectable ECC error is sticky: every later wait reports it, as on a real GPU.
cu::Result sticky_error() { return state().ecc_tripped ? cu::kErrorEccUncorrectable : cu::kSuccess; }

}  // namespace

#define SIM_API __attribute__((visibility("default")))

extern "C" {

SIM_API cu::Result cuCtxSynchronize() {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  wait_context_idle(ctx);
  return sticky_error();
}

SIM_API cu::Result cuCtxEnablePeerAccess(cu::Context peer, unsigned flags) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  if (flags != 0 || !peer) return cu::kErrorInvalidValue;
  int b = context_of(peer)->device;
  if (!state().config.peer_access[static_cast<std::size_t>(ctx->device)][static_cast<std::size_t>(b)])
    return cu::kErrorPeerAccessUnsupported;
  if (!ctx->peers.insert(b).second) return cu::kErrorPeerAccessAlreadyEnabled;
  return cu::kSuccess;
}

SIM_API cu::Result cuCtxDisablePeerAccess(cu::Context peer) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  if (!peer) return cu::kErrorInvalidValue;
  if (ctx->peers.erase(context_of(peer)->device) == 0) return cu::kErrorPeerAccessNotEnabled;
  return cu::kSuccess;
}

SIM_API cu::Result cuMemGetInfo_v2(std::size_t* free_bytes, std::size_t* total_bytes) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  State& s = state();
  std::lock_guard lock(s.memory_m);
  std::uint64_t total = s.config.devices[static_cast<std::size_t>(ctx->device)].memory_bytes;
  *total_bytes = total;
  *free_bytes = total - std::min(total, s.used_bytes[static_cast<std::size_t>(ctx->device)]);
  return cu::kSuccess;
}

SIM_API cu::Result cuMemAlloc_v2(cu::DevicePtr* out, std::size_t bytes) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  if (bytes == 0) return cu::kErrorInvalidValue;
  State& s = state();
  std::lock_guard lock(s.memory_m);
  auto d = static_cast<std::size_t>(ctx->device);
  if (s.config.faults.oom || s.used_bytes[d] + bytes > s.config.devices[d].memory_bytes) return cu::kErrorOutOfMemory;
  void* p = aligned_bytes(bytes);
  if (!p) return cu::kErrorOutOfMemory;
  s.allocations[reinterpret_cast<std::uintptr_t>(p)] = {bytes, ctx->device};
  s.used_bytes[d] += bytes;
  note_memory_written();  // new memory at an address that may have held a freed buffer
  *out = from_ptr(p);
  return cu::kSuccess;
}

SIM_API cu::Result cuMemFree_v2(cu::DevicePtr p) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  State& s = state();
  // Freeing device memory synchronizes (cudaFree's "implicitly synchronizes the device" in the CUDA
  // Runtime API's synchronization notes; cuMemFree is what it calls): a free waits for the owning
  // context's running work, so freeing under hung work blocks, as on a real GPU.
  int owner = s.locate(to_ptr(p)).device;
  if (owner >= 0) wait_context_idle(&s.contexts[static_cast<std::size_t>(owner)]);
  std::lock_guard lock(s.memory_m);
  auto it = s.allocations.find(static_cast<std::uintptr_t>(p));
  if (it == s.allocations.end() || it->second.second < 0) return cu::kErrorInvalidValue;
  s.used_bytes[static_cast<std::size_t>(it->second.second)] -= it->second.first;
  std::free(to_ptr(p));
  s.allocations.erase(it);
  note_memory_written();
  return cu::kSuccess;
}

SIM_API cu::Result cuMemHostAlloc(void** out, std::size_t bytes, unsigned) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  void* p = aligned_bytes(bytes);
  if (!p) return cu::kErrorOutOfMemory;
  std::memset(p, 0, bytes);
  State& s = state();
  std::lock_guard lock(s.memory_m);
  s.allocations[reinterpret_cast<std::uintptr_t>(p)] = {bytes, -1};
  *out = p;
  return cu::kSuccess;
}

SIM_API cu::Result cuMemFreeHost(void* p) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  State& s = state();
  std::lock_guard lock(s.memory_m);
  auto it = s.allocations.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == s.allocations.end() || it->second.second >= 0) return cu::kErrorInvalidValue;
  std::free(p);
  s.allocations.erase(it);
  return cu::kSuccess;
}

SIM_API cu::Result cuMemHostRegister_v2(void* p, std::size_t bytes, unsigned) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  if (!p || bytes == 0) return cu::kErrorInvalidValue;
  State& s = state();
  std::lock_guard lock(s.memory_m);
  s.registered[reinterpret_cast<std::uintptr_t>(p)] = bytes;
  return cu::kSuccess;
}

SIM_API cu::Result cuMemHostUnregister(void* p) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  State& s = state();
  std::lock_guard lock(s.memory_m);
  return s.registered.erase(reinterpret_cast<std::uintptr_t>(p)) ? cu::kSuccess : cu::kErrorInvalidValue;
}

SIM_API cu::Result cuMemHostGetDevicePointer_v2(cu::DevicePtr* out, void* p, unsigned flags) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  if (flags != 0) return cu::kErrorInvalidValue;
  if (!state().locate(p).pinned) return cu::kErrorInvalidValue;
  *out = from_ptr(p);  // mapped host memory: the same address on the device
  return cu::kSuccess;
}

SIM_API cu::Result cuMemcpyHtoDAsync_v2(cu::DevicePtr dst, const void* src, std::size_t bytes, cu::Stream s) {
  return copy_async(to_ptr(dst), src, bytes, s, false);
}
SIM_API cu::Result cuMemcpyDtoHAsync_v2(void* dst, cu::DevicePtr src, std::size_t bytes, cu::Stream s) {
  return copy_async(dst, to_ptr(src), bytes, s, false);
}
SIM_API cu::Result cuMemcpyDtoDAsync_v2(cu::DevicePtr dst, cu::DevicePtr src, std::size_t bytes, cu::Stream s) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  State& st = state();
  int a = st.locate(to_ptr(src)).device, b = st.locate(to_ptr(dst)).device;
  bool peer = a >= 0 && b >= 0 && a != b &&
              (st.contexts[static_cast<std::size_t>(a)].peers.count(b) || st.contexts[static_cast<std::size_t>(b)].peers.count(a));
  return copy_async(to_ptr(dst), to_ptr(src), bytes, s, peer);
}
SIM_API cu::Result cuMemcpyPeerAsync(cu::DevicePtr dst, cu::Context dst_ctx, cu::DevicePtr src, cu::Context src_ctx,
                                     std::size_t bytes, cu::Stream s) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  if (!dst_ctx || !src_ctx) return cu::kErrorInvalidContext;
  Context* a = context_of(src_ctx);
  Context* b = context_of(dst_ctx);
  // Peer access on in either direction: a direct copy; off: the driver stages through host memory.
  bool direct = a->peers.count(b->device) || b->peers.count(a->device);
  cu::Result rc = copy_async(to_ptr(dst), to_ptr(src), bytes, s, direct);
  // A driver that stages synchronously returns only when the copy is done, behind whatever the
  // stream held before it (a hold kernel waiting for this very thread).
  if (rc == cu::kSuccess && !direct && state().config.driver.synchronous_staged_peer_copies)
    if (Stream* stream = stream_of(s)) stream->synchronize();
  return rc;
}
SIM_API cu::Result cuMemcpyDtoH_v2(void* dst, cu::DevicePtr src, std::size_t bytes) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  drain_legacy();
  std::memcpy(dst, to_ptr(src), bytes);
  note_memory_written();
  return cu::kSuccess;
}
SIM_API cu::Result cuMemcpyHtoD_v2(cu::DevicePtr dst, const void* src, std::size_t bytes) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  const double lag_ms = state().config.driver.pageable_copy_lag_ms;
  if (lag_ms > 0 && !state().locate(src).pinned) {
    // Staged now, delivered later on the legacy stream (what a non-blocking stream never waits for).
    Stream* legacy = legacy_stream();
    if (!legacy) return cu::kErrorInvalidContext;
    auto staged = std::make_shared<std::vector<unsigned char>>(static_cast<const unsigned char*>(src),
                                                                 static_cast<const unsigned char*>(src) + bytes);
    void* to = to_ptr(dst);
    legacy->enqueue([staged, to, lag_ms](Stream&) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(lag_ms));
      std::memcpy(to, staged->data(), staged->size());
      note_memory_written();
    });
    return cu::kSuccess;
  }
  drain_legacy();
  std::memcpy(to_ptr(dst), src, bytes);
  note_memory_written();
  return cu::kSuccess;
}
SIM_API cu::Result cuMemsetD8_v2(cu::DevicePtr dst, unsigned char value, std::size_t bytes) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  // Asynchronous with respect to the host for device memory (CUDA Runtime API, "API
  // synchronization behavior": memsets "are asynchronous with respect to the host except when the
  // target is pinned host memory"): queued on the legacy stream, which a CU_STREAM_NON_BLOCKING
  // stream does not wait for. Host targets are set at once.
  void* to = to_ptr(dst);
  Stream* legacy = state().locate(to).device >= 0 ? legacy_stream() : nullptr;
  if (!legacy) {
    drain_legacy();
    std::memset(to, value, bytes);
    note_memory_written();
    return cu::kSuccess;
  }
  legacy->enqueue([to, value, bytes](Stream&) {
    std::memset(to, value, bytes);
    note_memory_written();
  });
  return cu::kSuccess;
}

SIM_API cu::Result cuStreamCreate(cu::Stream* out, unsigned) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  auto* s = new Stream(ctx);
  {
    std::lock_guard lock(state().streams_m);
    state().streams.insert(s);
  }
  *out = reinterpret_cast<cu::Stream>(s);
  return cu::kSuccess;
}

SIM_API cu::Result cuStreamDestroy_v2(cu::Stream h) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  Stream* s = stream_of(h);
  if (!s) return cu::kErrorInvalidHandle;
  {
    std::lock_guard lock(state().streams_m);
    state().streams.erase(s);
  }
  if (s->hung) {
    s->abandoned = true;  // its worker returns; the stream object is leaked on purpose
    return cu::kSuccess;
  }
  s->synchronize();
  delete s;
  return cu::kSuccess;
}

SIM_API cu::Result cuStreamSynchronize(cu::Stream h) {
  if (cu::Result rc = require_stream(h); rc != cu::kSuccess) return rc;
  if (Stream* s = stream_of(h)) s->synchronize();
  else drain_legacy();
  return sticky_error();
}

SIM_API cu::Result cuLaunchHostFunc(cu::Stream h, void (*fn)(void*), void* data) {
  if (cu::Result rc = require_stream(h); rc != cu::kSuccess) return rc;
  if (!fn) return cu::kErrorInvalidValue;
  return submit(h, [fn, data](Stream*) { fn(data); });
}

SIM_API cu::Result cuStreamQuery(cu::Stream h) {
  if (cu::Result rc = require_stream(h); rc != cu::kSuccess) return rc;
  Stream* s = stream_of(h);
  return !s || s->idle() ? cu::kSuccess : cu::kErrorNotReady;
}

SIM_API cu::Result cuStreamWaitEvent(cu::Stream h, cu::Event e, unsigned) {
  if (cu::Result rc = require_stream(h); rc != cu::kSuccess) return rc;
  Event* ev = event_of(e);
  if (!ev) return cu::kErrorInvalidHandle;
  std::uint64_t generation;
  {
    std::lock_guard lock(ev->m);
    generation = ev->recorded;
  }
  return submit(h, [ev = shared_event(e), generation](Stream* on) {
    ev->wait(generation);
    if (on) {
      std::lock_guard lock(ev->m);
      on->clock_s = std::max(on->clock_s, ev->time_s);
    }
  });
}

SIM_API cu::Result cuEventCreate(cu::Event* out, unsigned) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  *out = reinterpret_cast<cu::Event>(new EventHandle);
  return cu::kSuccess;
}
SIM_API cu::Result cuEventDestroy_v2(cu::Event e) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  delete handle_of(e);  // a record still queued keeps the Event until it has run
  return cu::kSuccess;
}
SIM_API cu::Result cuEventRecord(cu::Event e, cu::Stream h) {
  if (cu::Result rc = require_stream(h); rc != cu::kSuccess) return rc;
  Event* ev = event_of(e);
  if (!ev) return cu::kErrorInvalidHandle;
  std::uint64_t generation;
  {
    std::lock_guard lock(ev->m);
    generation = ++ev->recorded;
  }
  return submit(h, [ev = shared_event(e), generation](Stream* on) { ev->complete(generation, on ? on->clock_s : now_s()); });
}
SIM_API cu::Result cuEventQuery(cu::Event e) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  Event* ev = event_of(e);
  if (cu::Result rc = sticky_error(); rc != cu::kSuccess) return rc;
  std::lock_guard lock(ev->m);
  return ev->completed >= ev->recorded ? cu::kSuccess : cu::kErrorNotReady;
}
SIM_API cu::Result cuEventSynchronize(cu::Event e) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  Event* ev = event_of(e);
  std::uint64_t generation;
  {
    std::lock_guard lock(ev->m);
    generation = ev->recorded;
  }
  ev->wait(generation);
  return sticky_error();
}
SIM_API cu::Result cuEventElapsedTime(float* ms, cu::Event start, cu::Event end) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  if (cuEventQuery(start) != cu::kSuccess || cuEventQuery(end) != cu::kSuccess) return cu::kErrorNotReady;
  std::lock_guard a(event_of(start)->m);
  std::lock_guard b(event_of(end)->m);
  *ms = static_cast<float>((event_of(end)->time_s - event_of(start)->time_s) * 1e3);
  return cu::kSuccess;
}

SIM_API cu::Result cuModuleLoadData(cu::Module* out, const void* image) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  if (!image) return cu::kErrorInvalidValue;
  std::string ptx(static_cast<const char*>(image));
  int isa = ptx_isa_of(ptx);
  if (isa < 0) return cu::kErrorInvalidPtx;
  if (isa > max_ptx_isa(state().config.driver_version)) return cu::kErrorUnsupportedPtxVersion;
  auto* module = new SimModule{ptx_entries(ptx), ctx, {}};
  if (!state().lazy_loading) module->loaded.insert(module->entries.begin(), module->entries.end());
  *out = reinterpret_cast<cu::Module>(module);
  return cu::kSuccess;
}
SIM_API cu::Result cuModuleUnload(cu::Module m) {
  if (int rc = require_initialized(); rc != cu::kSuccess) return rc;
  delete reinterpret_cast<SimModule*>(m);
  return cu::kSuccess;
}
SIM_API cu::Result cuModuleGetFunction(cu::Function* out, cu::Module m, const char* name) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  auto* module = reinterpret_cast<SimModule*>(m);
  if (!module || !name) return cu::kErrorInvalidValue;
  Kernel k;
  if (std::find(module->entries.begin(), module->entries.end(), name) == module->entries.end() || !kernel_by_name(name, k))
    return cu::kErrorNotFound;
  // Lazy loading: the kernel loads now, and a load may need the context synchronized ("Loading
  // kernels might require context synchronization", CUDA C++ Programming Guide, Lazy Loading): it
  // waits for every running kernel of the module's context, so one spinning until the host moves
  // on deadlocks until it gives up, as on a real GPU.
  if (module->loaded.insert(name).second) wait_context_idle(module->context);
  *out = reinterpret_cast<cu::Function>(new SimFunction{k});  // one per lookup: the engine looks each up once
  return cu::kSuccess;
}
SIM_API cu::Result cuLaunchKernel(cu::Function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                  unsigned bz, unsigned, cu::Stream h, void** params, void**) {
  Context* ctx = nullptr;
  if (int rc = require_context(ctx); rc != cu::kSuccess) return rc;
  if (!f || gx * gy * gz == 0 || bx * by * bz == 0 || bx * by * bz > 1024) return cu::kErrorInvalidValue;
  Kernel k = reinterpret_cast<SimFunction*>(f)->kernel;
  if (!params && parameter_count(k) > 0) return cu::kErrorInvalidValue;
  // The SM copy kernel touching another GPU's memory needs peer access from this context; a real
  // GPU faults (CUDA_ERROR_ILLEGAL_ADDRESS, 700) when the kernel runs, the simulator refuses the launch.
  if (k == Kernel::copy)
    for (int i = 0; i < 2; ++i) {
      int owner = state().locate(*static_cast<void**>(params[i])).device;
      if (owner >= 0 && owner != ctx->device && !ctx->peers.count(owner)) return cu::kErrorIllegalAddress;
    }
  if (!stream_of(h)) drain_legacy();
  return run_kernel(k, params, stream_of(h), ctx->device);
}

}  // extern "C"
