#pragma once
// Thin RAII over the CUDA runtime for the copy engine (cuda_support.cpp). No CUDA header:
// streams and events are the runtime's opaque CUstream_st / CUevent_st.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct CUstream_st;
struct CUevent_st;

namespace interprobe::cuda {

// Throws VendorError naming the call when rc (a cudaError_t) is not success.
void check(int rc, const char* call);

struct DeviceInfo {
  int ordinal = 0;        // CUDA's number
  std::string bdf;        // "0000:1b:00.0", lower case like sysfs
  std::string name;
  int sm_count = 1;
  std::size_t free_bytes = 0, total_bytes = 0;
};

// Every device, in PCI bus order. Throws UnsupportedError with cudaGetDeviceCount's reason
// when there is no driver or no device.
std::vector<DeviceInfo> enumerate_devices();

// cudaDeviceCanAccessPeer(a, b).
bool can_access_peer(int a, int b);
// Peer access from a's context to b's memory on or off; idempotent.
void set_peer_access(int a, int b, bool enabled);

class DeviceGuard {  // makes `device` current for the scope
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

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

// Page-locks existing host memory for DMA (cudaHostRegister, portable + mapped).
class PinnedRegistration {
 public:
  PinnedRegistration() = default;
  PinnedRegistration(void* ptr, std::size_t bytes);
  PinnedRegistration(PinnedRegistration&& o) noexcept;
  PinnedRegistration& operator=(PinnedRegistration&& o) noexcept;
  ~PinnedRegistration();
  // The address a kernel on the current device uses for this memory.
  void* device_pointer() const;

 private:
  void* ptr_ = nullptr;
};

class Stream {
 public:
  explicit Stream(int device);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream_st* get() const { return stream_; }
  int device() const { return device_; }
  void synchronize() const;

 private:
  int device_;
  CUstream_st* stream_ = nullptr;
};

class Event {
 public:
  Event(int device, bool timing);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  CUevent_st* get() const { return event_; }
  void record(const Stream& stream) const;
  void synchronize() const;
  // Milliseconds from `start` to this event (both recorded on streams of one device).
  float elapsed_ms_since(const Event& start) const;

 private:
  int device_;
  CUevent_st* event_ = nullptr;
};

void wait_event(const Stream& stream, const Event& event);

// A host flag in mapped pinned memory that hold kernels spin on.
class HoldFlag {
 public:
  HoldFlag();
  ~HoldFlag();
  HoldFlag(const HoldFlag&) = delete;
  HoldFlag& operator=(const HoldFlag&) = delete;
  // Queues a kernel on `stream` that waits for release() (at most `timeout_ns`).
  void hold(const Stream& stream, std::uint64_t timeout_ns);
  void release();
  void arm();             // before holding: flag down, timeout cleared
  bool timed_out() const;

 private:
  volatile int* flag_ = nullptr;
  int* timed_out_ = nullptr;
};

}  // namespace interprobe::cuda
