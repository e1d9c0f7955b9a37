#pragma once
// What both kinds of simulated communicator share: the description's "nccl" settings, NCCL's
// INFO log, element conversion and the sum, and the ring model's time.
#include <dlfcn.h>

#include <cstddef>
#include <string>

namespace sim_nccl {

using Result = int;  // ncclResult_t
inline constexpr Result kSuccess = 0, kUnhandledCudaError = 1, kSystemError = 2, kInternalError = 3, kInvalidArgument = 4,
                        kInvalidUsage = 5, kRemoteError = 6;
inline constexpr int kFloat16 = 6, kFloat32 = 7, kBfloat16 = 9;
inline constexpr int kSum = 0;

struct Settings {
  int version = 22304;  // 2.23.4
  int cuda_major = 12;
  double bus_gbps = 100, latency_us = 20;
  bool hang = false;
  std::string transport = "P2P/CUMEM";
  // Multi-process communicators: how long a rank waits for the others (joining, each collective)
  // before it reports ncclRemoteError instead of waiting for a dead peer for ever.
  double peer_timeout_s = 30;
};
const Settings& settings();

// NCCL_P2P_DISABLE=1 (the p2p-off variant) makes real NCCL go through shared memory.
std::string transport();

// The ring model: latency + 2(n-1)/n x bytes / bus bandwidth.
double ring_seconds(double bytes, int ranks);

// The simulated driver, already loaded by the process (its SONAME is libcuda.so.1).
template <class Fn>
Fn* cuda_entry(const char* name) {
  static void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return handle ? reinterpret_cast<Fn*>(dlsym(handle, name)) : nullptr;
}

enum class Subsys { init, tuning };
// One INFO line as real NCCL writes it (NCCL_DEBUG, NCCL_DEBUG_SUBSYS, NCCL_DEBUG_FILE).
void log_info(Subsys subsys, const std::string& text);
// A WARN line goes to stderr whatever NCCL_DEBUG says: a simulated failure should say why.
void log_warn(const std::string& text);
// ncclResetDebugInit: read NCCL_DEBUG* again at the next line.
void reset_debug();
std::string version_line();

std::size_t element_bytes(int type);
bool supported_type(int type);
// sum[i] += element i of `src` (of `type`), for i < count.
void accumulate(float* sum, const void* src, int type, std::size_t count);
// Element i of `dst` = sum[i] in `type` (half and bfloat16 round to nearest even).
void store_all(void* dst, int type, const float* sum, std::size_t count);

}  // namespace sim_nccl
