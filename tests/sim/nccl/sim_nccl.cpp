// A simulated libnccl.so.2 for tests (never installed): communicators over the simulated GPUs of
// tests/sim/cuda in one process (ncclCommInitAll), all-reduce (sum) computed on the host when the
// group ends, timed by a ring model, NCCL's INFO log lines for transport capture, and an
// injectable hang for the watchdog. Settings: the "nccl" object of INTERPROBE_SIM_CONFIG's file.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using Result = int;
constexpr Result kSuccess = 0, kUnhandledCudaError = 1, kInvalidArgument = 4, kInvalidUsage = 5;
constexpr int kFloat16 = 6, kFloat32 = 7, kBfloat16 = 9;
constexpr int kSum = 0;

struct Settings {
  int version = 22304;  // 2.23.4
  int cuda_major = 12;
  double bus_gbps = 100, latency_us = 20;
  bool hang = false;
  std::string transport = "P2P/CUMEM";
};

Settings& settings() {
  static Settings s = [] {
    Settings out;
    const char* file = std::getenv("INTERPROBE_SIM_CONFIG");
    if (!file) return out;
    std::ifstream in(file);
    auto j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.contains("nccl")) return out;
    const auto& n = j["nccl"];
    out.version = n.value("version", out.version);
    out.cuda_major = n.value("cuda_major", out.cuda_major);
    out.bus_gbps = n.value("bus_gbps", out.bus_gbps);
    out.latency_us = n.value("latency_us", out.latency_us);
    out.hang = n.value("hang", false);
    out.transport = n.value("transport", out.transport);
    return out;
  }();
  return s;
}

// NCCL_P2P_DISABLE=1 (the p2p-off variant) makes real NCCL go through shared memory.
std::string transport() {
  const char* off = std::getenv("NCCL_P2P_DISABLE");
  return off && std::strcmp(off, "1") == 0 ? "SHM/direct/direct" : settings().transport;
}

// The simulated driver, already loaded by the process (its SONAME is libcuda.so.1).
template <class Fn>
Fn* cuda_entry(const char* name) {
  static void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return handle ? reinterpret_cast<Fn*>(dlsym(handle, name)) : nullptr;
}

struct Clique;

struct Pending {
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  int type = kFloat32;
  void* stream = nullptr;
};

struct Comm {
  std::shared_ptr<Clique> clique;
  int rank = 0, device = 0;
};

struct Clique {
  int ranks = 0;
  std::vector<Pending> pending;
  std::vector<bool> queued;
  std::mutex m;
  std::condition_variable cv;
  bool aborted = false;
};

thread_local int group_depth = 0;
thread_local std::vector<std::shared_ptr<Clique>> group_cliques;

std::string expand(std::string pattern) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  for (std::size_t at; (at = pattern.find("%h")) != std::string::npos;) pattern.replace(at, 2, host);
  for (std::size_t at; (at = pattern.find("%p")) != std::string::npos;) pattern.replace(at, 2, std::to_string(getpid()));
  return pattern;
}

// NCCL's log settings as real NCCL holds them: read from the environment at the first line and
// kept until ncclResetDebugInit; the file is opened (truncated) once per reading.
struct DebugSettings {
  bool read = false;
  bool info = false;
  bool init = true, tuning = false;  // subsystems; NCCL's default mask is INIT,BOOTSTRAP,ENV
  std::string file;                  // empty: stdout
  bool opened = false;
};
std::mutex debug_m;
DebugSettings debug;

void read_debug_settings() {
  const char* level = std::getenv("NCCL_DEBUG");
  debug = DebugSettings{};
  debug.read = true;
  debug.info = level && (std::strcmp(level, "INFO") == 0 || std::strcmp(level, "TRACE") == 0);
  if (const char* subsys = std::getenv("NCCL_DEBUG_SUBSYS")) {
    std::string s = subsys;
    bool all = s.find("ALL") != std::string::npos;
    debug.init = all || s.find("INIT") != std::string::npos;
    debug.tuning = all || s.find("TUNING") != std::string::npos;
  }
  const char* file = std::getenv("NCCL_DEBUG_FILE");
  if (file && *file) debug.file = expand(file);
}

enum class Subsys { init, tuning };

void log_info(Subsys subsys, const std::string& text) {
  std::lock_guard lock(debug_m);
  if (!debug.read) read_debug_settings();
  if (!debug.info || (subsys == Subsys::init && !debug.init) || (subsys == Subsys::tuning && !debug.tuning)) return;
  FILE* out = debug.file.empty() ? stdout : std::fopen(debug.file.c_str(), debug.opened ? "a" : "w");
  if (!out) return;
  debug.opened = true;
  std::fprintf(out, "simhost:%d:%d [0] NCCL INFO %s\n", getpid(), getpid(), text.c_str());
  if (out != stdout) std::fclose(out);
}

float from_half(std::uint16_t h) {
  _Float16 f;
  std::memcpy(&f, &h, 2);
  return static_cast<float>(f);
}
std::uint16_t to_half(float v) {
  _Float16 f = static_cast<_Float16>(v);
  std::uint16_t h;
  std::memcpy(&h, &f, 2);
  return h;
}
float from_bf16(std::uint16_t b) {
  std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
std::uint16_t to_bf16(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest even
  return static_cast<std::uint16_t>(u >> 16);
}

float load(const void* p, int type, std::size_t i) {
  if (type == kFloat32) return static_cast<const float*>(p)[i];
  auto h = static_cast<const std::uint16_t*>(p)[i];
  return type == kFloat16 ? from_half(h) : from_bf16(h);
}
void store(void* p, int type, std::size_t i, float v) {
  if (type == kFloat32) static_cast<float*>(p)[i] = v;
  else static_cast<std::uint16_t*>(p)[i] = type == kFloat16 ? to_half(v) : to_bf16(v);
}
std::size_t element_bytes(int type) { return type == kFloat32 ? 4 : 2; }

void block_until_abort(void* data) {
  auto* c = static_cast<Clique*>(data);
  std::unique_lock lock(c->m);
  c->cv.wait(lock, [&] { return c->aborted; });
}

// Every rank queued its part: reduce on the host, then hold for the ring model's time.
Result run(Clique& c) {
  auto sync = cuda_entry<int(void*)>("cuStreamSynchronize");
  auto host_func = cuda_entry<int(void*, void (*)(void*), void*)>("cuLaunchHostFunc");
  if (!sync || !host_func) return kUnhandledCudaError;
  if (settings().hang) {
    for (const auto& p : c.pending) host_func(p.stream, block_until_abort, &c);
    return kSuccess;
  }
  for (const auto& p : c.pending) sync(p.stream);
  const Pending& first = c.pending.front();
  std::vector<float> sum(first.count, 0.0f);
  for (const auto& p : c.pending)
    for (std::size_t i = 0; i < p.count; ++i) sum[i] += load(p.send, p.type, i);
  for (const auto& p : c.pending)
    for (std::size_t i = 0; i < p.count; ++i) store(p.recv, p.type, i, sum[i]);
  double bytes = static_cast<double>(first.count * element_bytes(first.type));
  double seconds = settings().latency_us * 1e-6 + 2.0 * (c.ranks - 1) / c.ranks * bytes / (settings().bus_gbps * 1e9);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  log_info(Subsys::tuning, "AllReduce: " + std::to_string(static_cast<long long>(bytes)) + " Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}");
  return kSuccess;
}

}  // namespace

#define SIM_API extern "C" __attribute__((visibility("default")))

SIM_API const char* interprobe_sim_version() { return "interprobe-sim 1"; }
// A real libnccl carries "NCCL version X+cudaM.N" as a literal in its file; this one's comes from
// the description, so it tells interprobe directly.
SIM_API int interprobe_sim_nccl_cuda_major() { return settings().cuda_major; }

SIM_API Result ncclGetVersion(int* version) {
  *version = settings().version;
  return kSuccess;
}

SIM_API const char* ncclGetErrorString(Result rc) {
  switch (rc) {
    case kSuccess: return "no error";
    case kUnhandledCudaError: return "unhandled cuda error (simulated NCCL)";
    case kInvalidArgument: return "invalid argument (simulated NCCL)";
    case kInvalidUsage: return "invalid usage (simulated NCCL: multi-process communicators are not simulated)";
    default: return "unknown result (simulated NCCL)";
  }
}

SIM_API void ncclResetDebugInit() {
  std::lock_guard lock(debug_m);
  debug = DebugSettings{};
}

SIM_API Result ncclGetUniqueId(void* id) {
  std::memset(id, 0, 128);
  return kSuccess;
}

SIM_API Result ncclCommInitRank(void**, int, char[128], int) { return kInvalidUsage; }

SIM_API Result ncclCommInitAll(void** comms, int ndev, const int* devices) {
  if (ndev < 1 || !comms) return kInvalidArgument;
  auto clique = std::make_shared<Clique>();
  clique->ranks = ndev;
  clique->pending.resize(static_cast<std::size_t>(ndev));
  clique->queued.assign(static_cast<std::size_t>(ndev), false);
  int version = settings().version;
  log_info(Subsys::init, "NCCL version " + std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100) + "." +
           std::to_string(version % 100) + "+cuda" + std::to_string(settings().cuda_major) + ".0 (simulated)");
  for (int r = 0; r < ndev; ++r) {
    comms[r] = new Comm{clique, r, devices ? devices[r] : r};
    if (ndev > 1)
      log_info(Subsys::init, "Channel 00/0 : " + std::to_string(r) + "[" + std::to_string(r) + "] -> " + std::to_string((r + 1) % ndev) + "[" +
               std::to_string((r + 1) % ndev) + "] via " + transport());
  }
  return kSuccess;
}

SIM_API Result ncclCommDestroy(void* comm) {
  delete static_cast<Comm*>(comm);
  return kSuccess;
}

SIM_API Result ncclCommAbort(void* comm) {
  auto* c = static_cast<Comm*>(comm);
  {
    std::lock_guard lock(c->clique->m);
    c->clique->aborted = true;
  }
  c->clique->cv.notify_all();
  delete c;
  return kSuccess;
}

SIM_API Result ncclCommGetAsyncError(void*, Result* async) {
  *async = kSuccess;
  return kSuccess;
}

SIM_API Result ncclGroupStart() {
  ++group_depth;
  return kSuccess;
}

SIM_API Result ncclGroupEnd() {
  if (group_depth == 0) return kInvalidUsage;
  if (--group_depth > 0) return kSuccess;
  Result rc = kSuccess;
  for (auto& clique : group_cliques) {
    if (std::all_of(clique->queued.begin(), clique->queued.end(), [](bool q) { return q; })) rc = run(*clique);
    else rc = kInvalidUsage;  // a rank missing: real NCCL would hang; say so instead
    std::fill(clique->queued.begin(), clique->queued.end(), false);
  }
  group_cliques.clear();
  return rc;
}

SIM_API Result ncclAllReduce(const void* send, void* recv, std::size_t count, int type, int op, void* comm, void* stream) {
  auto* c = static_cast<Comm*>(comm);
  if (!c || op != kSum || (type != kFloat32 && type != kFloat16 && type != kBfloat16)) return kInvalidArgument;
  auto& clique = c->clique;
  clique->pending[static_cast<std::size_t>(c->rank)] = Pending{send, recv, count, type, stream};
  clique->queued[static_cast<std::size_t>(c->rank)] = true;
  if (std::find(group_cliques.begin(), group_cliques.end(), clique) == group_cliques.end()) group_cliques.push_back(clique);
  if (group_depth == 0) {  // outside a group: only a one-rank communicator can complete
    ncclGroupStart();
    return ncclGroupEnd();
  }
  return kSuccess;
}
