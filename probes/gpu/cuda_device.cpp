// CUDA devices, contexts, memory, streams and events over the driver API (cuda_driver.hpp).
#include "probes/gpu/cuda_device.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "probes/gpu/cuda_driver.hpp"

namespace interprobe::cuda {

namespace {

const cu::Driver& drv() { return cu::driver(); }

cu::DevicePtr dptr(const void* p) { return static_cast<cu::DevicePtr>(reinterpret_cast<std::uintptr_t>(p)); }
void* hptr(cu::DevicePtr p) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)); }

int attribute(int attr, int device) {
  int value = 0;
  cu::check(drv().device_get_attribute(&value, attr, device), "cuDeviceGetAttribute");
  return value;
}

}  // namespace

std::vector<DeviceInfo> enumerate_devices() {
  const cu::Driver& d = drv();  // UnsupportedError: no driver, too old, cuInit failed
  int count = 0;
  if (cu::Result rc = d.device_get_count(&count); rc != cu::kSuccess)
    throw UnsupportedError(fmt::format("no usable CUDA device: cuDeviceGetCount: {}", d.describe(rc)));
  if (count == 0) throw UnsupportedError("no CUDA device: cuDeviceGetCount found 0 devices");
  std::vector<DeviceInfo> devices;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    cu::Device dev = 0;
    cu::check(d.device_get(&dev, ordinal), "cuDeviceGet");
    DeviceInfo info;
    info.ordinal = dev;
    char text[256] = {};
    cu::check(d.device_get_pci_bus_id(text, sizeof text, dev), "cuDeviceGetPCIBusId");
    info.bdf = text;
    std::transform(info.bdf.begin(), info.bdf.end(), info.bdf.begin(), [](unsigned char c) { return std::tolower(c); });
    char name[256] = {};
    cu::check(d.device_get_name(name, sizeof name, dev), "cuDeviceGetName");
    info.name = name;
    info.sm_count = std::max(1, attribute(cu::kAttrMultiprocessorCount, dev));
    info.max_threads_per_sm = std::max(32, attribute(cu::kAttrMaxThreadsPerMultiprocessor, dev));
    info.l2_bytes = static_cast<std::uint64_t>(std::max(0, attribute(cu::kAttrL2CacheSize, dev)));
    info.cc_major = attribute(cu::kAttrComputeCapabilityMajor, dev);
    info.cc_minor = attribute(cu::kAttrComputeCapabilityMinor, dev);
    DeviceGuard guard(dev);
    cu::check(d.mem_get_info(&info.free_bytes, &info.total_bytes), "cuMemGetInfo");
    devices.push_back(std::move(info));
  }
  // PCI bus order, the order the topology section numbers GPUs in, whatever CUDA_DEVICE_ORDER says.
  std::sort(devices.begin(), devices.end(), [](const auto& a, const auto& b) { return a.bdf < b.bdf; });
  return devices;
}

int full_occupancy_blocks(int sm_count, int max_threads_per_sm, int threads_per_block) {
  return std::max(1, sm_count) * std::max(1, max_threads_per_sm / std::max(1, threads_per_block));
}

cu::Context primary_context(int device) {
  static std::mutex m;
  static std::map<int, cu::Context> contexts;
  std::lock_guard lock(m);
  if (auto it = contexts.find(device); it != contexts.end()) return it->second;
  cu::Context ctx = nullptr;
  cu::check(drv().primary_ctx_retain(&ctx, device), "cuDevicePrimaryCtxRetain");
  contexts[device] = ctx;
  return ctx;
}

bool can_access_peer(int a, int b) {
  int can = 0;
  cu::check(drv().device_can_access_peer(&can, a, b), "cuDeviceCanAccessPeer");
  return can != 0;
}

void set_peer_access(int a, int b, bool enabled) {
  if (a == b) return;
  DeviceGuard guard(a);
  cu::Context peer = primary_context(b);
  cu::Result rc = enabled ? drv().ctx_enable_peer_access(peer, 0) : drv().ctx_disable_peer_access(peer);
  if (rc == cu::kErrorPeerAccessAlreadyEnabled || rc == cu::kErrorPeerAccessNotEnabled) return;  // as asked already
  cu::check(rc, enabled ? "cuCtxEnablePeerAccess" : "cuCtxDisablePeerAccess");
}

DeviceGuard::DeviceGuard(int device) {
  cu::check(drv().ctx_get_current(&previous_), "cuCtxGetCurrent");
  cu::check(drv().ctx_set_current(primary_context(device)), "cuCtxSetCurrent");
}
DeviceGuard::~DeviceGuard() { (void)drv().ctx_set_current(previous_); }

void synchronize_device(int device) {
  DeviceGuard guard(device);
  cu::check(drv().ctx_synchronize(), "cuCtxSynchronize");
}

void memset_device(int device, void* ptr, int value, std::size_t bytes) {
  DeviceGuard guard(device);
  cu::check(drv().memset_d8(dptr(ptr), static_cast<unsigned char>(value), bytes), "cuMemsetD8");
}

void copy_to_host(int device, void* dst, const void* src, std::size_t bytes) {
  DeviceGuard guard(device);
  cu::check(drv().memcpy_dtoh(dst, dptr(src), bytes), "cuMemcpyDtoH");
}

void copy_to_device(int device, void* dst, const void* src, std::size_t bytes) {
  DeviceGuard guard(device);
  cu::check(drv().memcpy_htod(dptr(dst), src, bytes), "cuMemcpyHtoD");
}

std::string device_label(int device) {
  const cu::Driver& d = drv();
  char name[256] = {};
  char bus[64] = {};
  if (d.device_get_name(name, sizeof name, device) != cu::kSuccess) std::snprintf(name, sizeof name, "unknown GPU");
  if (d.device_get_pci_bus_id(bus, sizeof bus, device) != cu::kSuccess) std::snprintf(bus, sizeof bus, "unknown bus");
  return fmt::format("{} ({})", name, bus);
}

void copy_async(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes, const Stream& on) {
  DeviceGuard guard(on.device());
  cu::Stream stream = on.get();
  if (src_device < 0)
    cu::check(drv().memcpy_htod_async(dptr(dst), src, bytes, stream), "cuMemcpyHtoDAsync");
  else if (dst_device < 0)
    cu::check(drv().memcpy_dtoh_async(dst, dptr(src), bytes, stream), "cuMemcpyDtoHAsync");
  else
    cu::check(drv().memcpy_dtod_async(dptr(dst), dptr(src), bytes, stream), "cuMemcpyDtoDAsync");
}

void copy_peer_async(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes, const Stream& on) {
  DeviceGuard guard(on.device());
  cu::Stream stream = on.get();
  cu::check(drv().memcpy_peer_async(dptr(dst), primary_context(dst_device), dptr(src), primary_context(src_device),
                                    bytes, stream),
            "cuMemcpyPeerAsync");
}

DeviceMemory::DeviceMemory(int device, std::size_t bytes) : device_(device), bytes_(bytes) {
  DeviceGuard guard(device);
  cu::DevicePtr p = 0;
  cu::check(drv().mem_alloc(&p, std::max<std::size_t>(bytes, 1)), "cuMemAlloc");
  ptr_ = hptr(p);
}
DeviceMemory::DeviceMemory(DeviceMemory&& o) noexcept
    : device_(o.device_), ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
DeviceMemory& DeviceMemory::operator=(DeviceMemory&& o) noexcept {
  if (this != &o) {
    reset();
    device_ = o.device_;
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}
DeviceMemory::~DeviceMemory() { reset(); }
void DeviceMemory::reset() noexcept {
  if (ptr_) (void)drv().mem_free(dptr(ptr_));
  ptr_ = nullptr;
}

PinnedRegistration::PinnedRegistration(int device, void* ptr, std::size_t bytes) : device_(device) {
  DeviceGuard guard(device);
  cu::check(drv().mem_host_register(ptr, bytes, cu::kMemHostRegisterPortable | cu::kMemHostRegisterDeviceMap),
            "cuMemHostRegister");
  ptr_ = ptr;
}
PinnedRegistration::PinnedRegistration(PinnedRegistration&& o) noexcept
    : device_(o.device_), ptr_(std::exchange(o.ptr_, nullptr)) {}
PinnedRegistration& PinnedRegistration::operator=(PinnedRegistration&& o) noexcept {
  if (this != &o) {
    if (ptr_) (void)drv().mem_host_unregister(ptr_);
    device_ = o.device_;
    ptr_ = std::exchange(o.ptr_, nullptr);
  }
  return *this;
}
PinnedRegistration::~PinnedRegistration() {
  if (ptr_) (void)drv().mem_host_unregister(ptr_);
}
void* PinnedRegistration::device_pointer() const {
  DeviceGuard guard(device_);
  cu::DevicePtr device = 0;
  cu::check(drv().mem_host_get_device_pointer(&device, ptr_, 0), "cuMemHostGetDevicePointer");
  return hptr(device);
}

Stream::Stream(int device) : device_(device) {
  DeviceGuard guard(device);
  cu::check(drv().stream_create(&stream_, cu::kStreamNonBlocking), "cuStreamCreate");
}
Stream::~Stream() {
  if (stream_) (void)drv().stream_destroy(stream_);
}
void Stream::synchronize() const { cu::check(drv().stream_synchronize(stream_), "cuStreamSynchronize"); }
bool Stream::done() const {
  cu::Result rc = drv().stream_query(stream_);
  if (rc == cu::kErrorNotReady) return false;
  cu::check(rc, "cuStreamQuery");
  return true;
}

Event::Event(int device, bool timing) : device_(device) {
  DeviceGuard guard(device);
  cu::check(drv().event_create(&event_, timing ? cu::kEventDefault : cu::kEventDisableTiming), "cuEventCreate");
}
Event::~Event() {
  if (event_) (void)drv().event_destroy(event_);
}
void Event::record(const Stream& stream) const { cu::check(drv().event_record(event_, stream.get()), "cuEventRecord"); }
void Event::synchronize(double timeout_s) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    cu::Result rc = drv().event_query(event_);
    if (rc == cu::kSuccess) return;
    if (rc != cu::kErrorNotReady) cu::check(rc, "cuEventQuery");
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error(fmt::format("GPU work did not complete within {:.0f} s (a copy that never finishes: "
                                           "driver or link stalled?)",
                                           timeout_s));
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}
float Event::elapsed_ms_since(const Event& start) const {
  float ms = 0;
  cu::check(drv().event_elapsed_time(&ms, start.event_, event_), "cuEventElapsedTime");
  return ms;
}

void wait_event(const Stream& stream, const Event& event) {
  cu::check(drv().stream_wait_event(stream.get(), event.get(), 0), "cuStreamWaitEvent");
}

}  // namespace interprobe::cuda
