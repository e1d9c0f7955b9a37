// Compiled only when the build has CUDA.
#include "probes/bandwidth/cuda_support.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include <fmt/format.h>

#include "probes/bandwidth/cuda_kernels.hpp"
#include "common/errors.hpp"

namespace interprobe::cuda {

void check(int rc, const char* call) {
  if (rc == cudaSuccess) return;
  throw VendorError(call, rc, cudaGetErrorString(static_cast<cudaError_t>(rc)));
}

std::vector<DeviceInfo> enumerate_devices() {
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess)
    throw UnsupportedError(fmt::format("no usable CUDA device: cudaGetDeviceCount: {} ({}); install the NVIDIA driver "
                                       "and check `nvidia-smi`",
                                       cudaGetErrorString(rc), static_cast<int>(rc)));
  if (count == 0) throw UnsupportedError("no CUDA device: cudaGetDeviceCount found 0 devices");
  std::vector<DeviceInfo> devices;
  for (int d = 0; d < count; ++d) {
    DeviceInfo info;
    info.ordinal = d;
    char bus_id[64] = {};
    check(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, d), "cudaDeviceGetPCIBusId");
    info.bdf = bus_id;
    std::transform(info.bdf.begin(), info.bdf.end(), info.bdf.begin(), [](unsigned char c) { return std::tolower(c); });
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, d), "cudaGetDeviceProperties");
    info.name = prop.name;
    info.sm_count = std::max(1, prop.multiProcessorCount);
    DeviceGuard guard(d);
    check(cudaMemGetInfo(&info.free_bytes, &info.total_bytes), "cudaMemGetInfo");
    devices.push_back(std::move(info));
  }
  // PCI bus order, the order the topology section numbers GPUs in, whatever CUDA_DEVICE_ORDER says.
  std::sort(devices.begin(), devices.end(), [](const auto& a, const auto& b) { return a.bdf < b.bdf; });
  return devices;
}

bool can_access_peer(int a, int b) {
  int can = 0;
  check(cudaDeviceCanAccessPeer(&can, a, b), "cudaDeviceCanAccessPeer");
  return can != 0;
}

void set_peer_access(int a, int b, bool enabled) {
  if (a == b) return;
  DeviceGuard guard(a);
  cudaError_t rc = enabled ? cudaDeviceEnablePeerAccess(b, 0) : cudaDeviceDisablePeerAccess(b);
  if (rc == cudaErrorPeerAccessAlreadyEnabled || rc == cudaErrorPeerAccessNotEnabled) {
    (void)cudaGetLastError();  // not an error here: already in the state asked for
    return;
  }
  check(rc, enabled ? "cudaDeviceEnablePeerAccess" : "cudaDeviceDisablePeerAccess");
}

DeviceGuard::DeviceGuard(int device) {
  check(cudaGetDevice(&previous_), "cudaGetDevice");
  check(cudaSetDevice(device), "cudaSetDevice");
}
DeviceGuard::~DeviceGuard() { (void)cudaSetDevice(previous_); }

DeviceMemory::DeviceMemory(int device, std::size_t bytes) : device_(device), bytes_(bytes) {
  DeviceGuard guard(device);
  check(cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 1)), "cudaMalloc");
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
  if (ptr_) (void)cudaFree(ptr_);
  ptr_ = nullptr;
}

PinnedRegistration::PinnedRegistration(void* ptr, std::size_t bytes) {
  check(cudaHostRegister(ptr, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped), "cudaHostRegister");
  ptr_ = ptr;
}
PinnedRegistration::PinnedRegistration(PinnedRegistration&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}
PinnedRegistration& PinnedRegistration::operator=(PinnedRegistration&& o) noexcept {
  if (this != &o) {
    if (ptr_) (void)cudaHostUnregister(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
  }
  return *this;
}
PinnedRegistration::~PinnedRegistration() {
  if (ptr_) (void)cudaHostUnregister(ptr_);
}
void* PinnedRegistration::device_pointer() const {
  void* device = nullptr;
  check(cudaHostGetDevicePointer(&device, ptr_, 0), "cudaHostGetDevicePointer");
  return device;
}

Stream::Stream(int device) : device_(device) {
  DeviceGuard guard(device);
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
}
Stream::~Stream() {
  if (stream_) (void)cudaStreamDestroy(stream_);
}
void Stream::synchronize() const { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

Event::Event(int device, bool timing) : device_(device) {
  DeviceGuard guard(device);
  check(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming), "cudaEventCreateWithFlags");
}
Event::~Event() {
  if (event_) (void)cudaEventDestroy(event_);
}
void Event::record(const Stream& stream) const { check(cudaEventRecord(event_, stream.get()), "cudaEventRecord"); }
void Event::synchronize() const { check(cudaEventSynchronize(event_), "cudaEventSynchronize"); }
float Event::elapsed_ms_since(const Event& start) const {
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start.event_, event_), "cudaEventElapsedTime");
  return ms;
}

void wait_event(const Stream& stream, const Event& event) {
  check(cudaStreamWaitEvent(stream.get(), event.get(), 0), "cudaStreamWaitEvent");
}

HoldFlag::HoldFlag() {
  void* p = nullptr;
  check(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocPortable | cudaHostAllocMapped), "cudaHostAlloc");
  flag_ = static_cast<volatile int*>(p);
  timed_out_ = static_cast<int*>(p) + 1;
  arm();
}
HoldFlag::~HoldFlag() {
  if (flag_) (void)cudaFreeHost(const_cast<int*>(flag_));
}
void HoldFlag::arm() {
  *flag_ = 0;
  __atomic_store_n(timed_out_, 0, __ATOMIC_RELEASE);
}
void HoldFlag::hold(const Stream& stream, std::uint64_t timeout_ns) {
  DeviceGuard guard(stream.device());
  void* flag_device = nullptr;
  void* timed_out_device = nullptr;
  check(cudaHostGetDevicePointer(&flag_device, const_cast<int*>(flag_), 0), "cudaHostGetDevicePointer");
  check(cudaHostGetDevicePointer(&timed_out_device, timed_out_, 0), "cudaHostGetDevicePointer");
  check(cuda_kernels::launch_hold(stream.get(), static_cast<const volatile int*>(flag_device),
                                  static_cast<int*>(timed_out_device), timeout_ns),
        "hold kernel launch");
}
void HoldFlag::release() { __atomic_store_n(const_cast<int*>(flag_), 1, __ATOMIC_RELEASE); }
bool HoldFlag::timed_out() const { return __atomic_load_n(timed_out_, __ATOMIC_ACQUIRE) != 0; }

}  // namespace interprobe::cuda
