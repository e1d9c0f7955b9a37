#pragma once
// The simulated driver's state: devices, primary contexts, memory (host memory standing in for
// device memory: a CUdeviceptr is the host address), streams and events.
//
// Streams run on a worker thread each, because the engine's hold kernel spins on a host flag
// that the host raises only after it queued every copy: a synchronous stream would deadlock.
// Each stream keeps a device clock: an operation starts at max(the clock, now when the stream
// was idle, the events it waits for) and a copy advances it by the link model's time. Events
// stamp the clock, so measured GB/s follow the model even when this host's memcpy is slower
// than the simulated link; when memcpy is faster, the worker also sleeps out the model's time,
// so wall time follows the model too.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sim_config.hpp"

namespace interprobe::sim {

double now_s();

struct Context {
  int device = 0;
  int retains = 0;
  std::set<int> peers;  // devices whose memory this context may access directly
  std::set<std::string> loaded_library_kernels;  // lazy loading: other libraries' kernels loaded so far
};

class Stream;

struct Event {
  std::mutex m;
  std::condition_variable cv;
  std::uint64_t recorded = 0, completed = 0;  // generations
  double time_s = 0;
  void complete(std::uint64_t generation, double at_s);
  void wait(std::uint64_t generation);
};

class Stream {
 public:
  Stream(Context* ctx);
  ~Stream();
  Context* context() const { return ctx_; }
  void enqueue(std::function<void(Stream&)> op);
  // While set (cuStreamBeginCapture .. cuStreamEndCapture), enqueue records into it instead.
  std::vector<std::function<void(Stream&)>>* capture = nullptr;
  void synchronize();
  bool idle();
  // Device clock (seconds, same base as now_s()); only the worker touches it.
  double clock_s = 0;
  // A hung operation polls this; the stream is then leaked, not joined.
  std::atomic<bool> abandoned{false};
  std::atomic<bool> hung{false};

 private:
  void run();
  Context* ctx_;
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  std::deque<std::function<void(Stream&)>> queue_;
  std::size_t pending_ = 0;
  bool stop_ = false;
  std::thread worker_;
};

// Where a pointer lives: a device's memory, pinned host memory, or pageable host memory.
struct Location {
  int device = -1;     // >= 0: device memory of that device
  bool pinned = false; // host memory: allocated or registered with the driver
};

struct State {
  SimConfig config;
  std::string config_error;  // why the description could not be read (cuInit fails)
  bool initialized = false;
  std::vector<Context> contexts;  // primary context per device
  std::vector<std::uint64_t> used_bytes;
  std::mutex memory_m;
  std::map<std::uintptr_t, std::pair<std::size_t, int>> allocations;  // base -> (bytes, device or -1 pinned)
  std::map<std::uintptr_t, std::size_t> registered;                  // cuMemHostRegister ranges
  std::mutex streams_m;
  std::set<Stream*> streams;  // live streams, for cuCtxSynchronize
  std::map<int, Stream*> legacy;  // device -> its legacy default stream, made on first use
  // Devices running work that never completes (faults.hang_peer_copies): destroying the stream does
  // not stop it, so whatever synchronizes the device blocks until the description is replaced
  // (generation changes), as a real GPU's would until reset. Guarded by streams_m.
  std::set<int> hung_devices;
  std::atomic<std::uint64_t> generation{0};
  std::atomic<bool> ecc_tripped{false};
  // Counts writes to memory by anything but the simulated cuBLASLt (copies, memsets, kernels,
  // allocations, frees): its cache of GEMM inputs stays valid while this does not move.
  std::atomic<std::uint64_t> write_epoch{0};  // faults.ecc_error: a copy ran, the error is sticky
  // CUDA_MODULE_LOADING at cuInit: LAZY (the default from CUDA 12.2) loads a kernel at its first
  // cuModuleGetFunction, which may wait for the context's running kernels; EAGER loads at
  // cuModuleLoadData.
  bool lazy_loading = true;
  Location locate(const void* p);
};

State& state();
void reset_state(SimConfig config);
Context*& current_context();

// The preconditions cuda.h documents (the conformance table in tests/unit/gpu/sim_conformance_test.cpp
// cites each): CUDA_ERROR_NOT_INITIALIZED (3) before cuInit, CUDA_ERROR_INVALID_CONTEXT (201)
// without a current context; 0 when met. `ctx` gets the current context.
int require_initialized();
int require_context(Context*& ctx);
// Blocks until every stream of the context is idle (what cuCtxSynchronize, cuMemFree and a lazy
// kernel load wait for).
void wait_context_idle(Context* ctx);

// After a write to memory (see State::write_epoch).
void note_memory_written();

// A copy as the simulated hardware does it: bytes move (memcpy), the stream's clock advances by
// the link's time, corrupt damages the destination, hang never returns (until the stream is
// abandoned).
void timed_copy(Stream* stream, void* dst, const void* src, std::size_t bytes, const LinkModel& link, bool corrupt,
                bool hang);
// A stream's operation that takes `seconds` of device time: the clock advances and the worker
// sleeps it out where the host was faster (no-op without a stream).
void advance_clock(Stream* stream, double seconds);
// The link a copy between two locations uses, seen from the stream's device.
struct CopyRoute {
  LinkModel link;
  bool peer = false;  // direct peer path: the peer faults apply
};
CopyRoute route(const Location& from, const Location& to, bool peer_allowed);

}  // namespace interprobe::sim
