#pragma once
// Thin RAII over the CUDA driver API (cuda_device.cpp) for the copy engine and NCCL: each device's
// primary context (what the CUDA runtime, and so NCCL, uses too), memory, streams, events.
// No vendor header: the driver is declared in probes/gpu/cuda_driver_api.hpp.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "probes/gpu/cuda_driver_api.hpp"

namespace interprobe::cuda {

struct DeviceInfo {
  int ordinal = 0;        // CUDA's number
  std::string bdf;        // "0000:1b:00.0", lower case like sysfs
  std::string name;
  int sm_count = 1;
  // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: 2048 on 8.0/9.0/10.0, 1536 on 8.6, 8.9 and
  // 12.0 (L40S, L4, RTX PRO 6000), 1024 on 7.5.
  int max_threads_per_sm = 2048;
  // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: 50 MiB on H100/H200, 126 MiB on B200; what a benchmark must
  // not measure instead of memory.
  std::uint64_t l2_bytes = 0;
  int cc_major = 0, cc_minor = 0;
  std::size_t free_bytes = 0, total_bytes = 0;
};

// Blocks of `threads_per_block` that fill every SM at once: sm_count x (threads per SM / block).
int full_occupancy_blocks(int sm_count, int max_threads_per_sm, int threads_per_block);

// Every device, in PCI bus order. Throws UnsupportedError with the reason when there is no
// driver, a driver older than CUDA 12.0, or no device.
std::vector<DeviceInfo> enumerate_devices();

// The device's primary context, retained on first use and kept for the process's lifetime
// (as the runtime does: NCCL and cuBLASLt then share it).
cu::Context primary_context(int device);

// cuDeviceCanAccessPeer(a, b).
bool can_access_peer(int a, int b);
// Peer access from a's context to b's memory on or off; idempotent.
void set_peer_access(int a, int b, bool enabled);

class DeviceGuard {  // makes `device`'s primary context current for the scope
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  cu::Context previous_ = nullptr;
};

// Waits for everything queued on the device (cuCtxSynchronize in its context).
void synchronize_device(int device);
// Device memory of `device` set to `value` (cuMemsetD8, ordered on the legacy stream).
void memset_device(int device, void* ptr, int value, std::size_t bytes);
// Device to host and host to device, synchronously.
void copy_to_host(int device, void* dst, const void* src, std::size_t bytes);
void copy_to_device(int device, void* dst, const void* src, std::size_t bytes);
// "NVIDIA H100 80GB HBM3 (0000:1b:00.0)", or what could not be read.
std::string device_label(int device);
class Stream;
// An engine copy on `stream`: host to device, device to host or within a device, by which side
// is a GPU (-1 = host memory). Queued with the stream's device's context current (the driver
// refuses a copy on a thread without one: CUDA_ERROR_INVALID_CONTEXT).
void copy_async(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes, const Stream& stream);
// A copy between two GPUs' memory (cuMemcpyPeerAsync): direct with peer access on, staged by
// the driver with it off.
void copy_peer_async(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes, const Stream& stream);

class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(int device, std::size_t bytes);
  DeviceMemory(DeviceMemory&& o) noexcept;
  DeviceMemory& operator=(DeviceMemory&& o) noexcept;
  ~DeviceMemory();
  void* get() const { return ptr_; }
  std::size_t size() const { return bytes_; }
  int device() const { return device_; }

 private:
  void reset() noexcept;
  int device_ = 0;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Page-locks existing host memory for DMA (cuMemHostRegister, portable + mapped).
class PinnedRegistration {
 public:
  PinnedRegistration() = default;
  // Registers with `device`'s context current: cuMemHostRegister needs one (without it the driver
  // returns CUDA_ERROR_INVALID_CONTEXT); portable, so every context may use the memory.
  PinnedRegistration(int device, void* ptr, std::size_t bytes);
  PinnedRegistration(PinnedRegistration&& o) noexcept;
  PinnedRegistration& operator=(PinnedRegistration&& o) noexcept;
  ~PinnedRegistration();
  // The address a kernel uses for this memory (asked with the registering device's context current).
  void* device_pointer() const;

 private:
  int device_ = 0;
  void* ptr_ = nullptr;
};

class Stream {
 public:
  explicit Stream(int device);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cu::Stream get() const { return stream_; }
  int device() const { return device_; }
  void synchronize() const;
  // Has everything queued finished? Throws VendorError on an error other than "not ready".
  bool done() const;

 private:
  int device_;
  cu::Stream stream_ = nullptr;
};

class Event {
 public:
  Event(int device, bool timing);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cu::Event get() const { return event_; }
  void record(const Stream& stream) const;
  // Waits for the event, at most `timeout_s`: throws when the work before it never completes
  // (a hung copy), instead of waiting forever.
  void synchronize(double timeout_s = kCompletionTimeoutS) const;
  static constexpr double kCompletionTimeoutS = 60;
  // Milliseconds from `start` to this event (both recorded on streams of one device).
  float elapsed_ms_since(const Event& start) const;

 private:
  int device_;
  cu::Event event_ = nullptr;
};

void wait_event(const Stream& stream, const Event& event);

}  // namespace interprobe::cuda
