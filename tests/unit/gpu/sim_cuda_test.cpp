// The simulated libcuda itself: what it reports from a description, its link model, its faults,
// its PTX ISA check and its kernels.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "probes/bandwidth/cuda_kernels.hpp"
#include "probes/bandwidth/pattern.hpp"
#include "sim_fixture.hpp"

namespace {

using namespace interprobe;
using interprobe::testing::read_text;
using interprobe::testing::sim_device_file;
using interprobe::testing::sim_load;

void* hptr(cu::DevicePtr p) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)); }

class SimCuda : public ::testing::Test {
 protected:
  cu::Driver load(const std::string& description_file) {
    sim_load(read_text(sim_device_file(description_file)));
    return cu::load_driver(INTERPROBE_SIM_CUDA);
  }
  cu::Context context(const cu::Driver& d, int device) {
    cu::Context ctx = nullptr;
    EXPECT_EQ(d.primary_ctx_retain(&ctx, device), cu::kSuccess);
    EXPECT_EQ(d.ctx_set_current(ctx), cu::kSuccess);
    return ctx;
  }
  cu::DevicePtr alloc(const cu::Driver& d, std::size_t bytes) {
    cu::DevicePtr p = 0;
    EXPECT_EQ(d.mem_alloc(&p, bytes), cu::kSuccess);
    return p;
  }
  // Holds `stream` behind the hold kernel until release(): what is queued meanwhile then runs
  // back to back, as in the copy engine, so host scheduling gaps do not enter the timing.
  void hold(const cu::Driver& d, cu::Stream stream) {
    cu::Module m = nullptr;
    ASSERT_EQ(d.module_load_data(&m, cuda_kernels::kPtx), cu::kSuccess);
    cu::Function f = nullptr;
    ASSERT_EQ(d.module_get_function(&f, m, "interprobe_hold"), cu::kSuccess);
    flag_ = 0;
    int* flag = &flag_;
    int* timed_out = &timed_out_;
    std::uint64_t timeout_ns = 10'000'000'000ull;
    void* args[] = {&flag, &timed_out, &timeout_ns};
    ASSERT_EQ(d.launch_kernel(f, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr), cu::kSuccess);
  }
  void release() { __atomic_store_n(&flag_, 1, __ATOMIC_RELEASE); }

 private:
  int flag_ = 0, timed_out_ = 0;
};

TEST_F(SimCuda, WithoutADescriptionItIsTwoGpusWithPeerAccess) {
  void* handle = dlopen(INTERPROBE_SIM_CUDA, RTLD_NOW);
  ASSERT_NE(handle, nullptr);
  auto load_default = reinterpret_cast<int (*)(const char*)>(dlsym(handle, "interprobe_sim_load"));
  ASSERT_EQ(load_default(nullptr), 0);
  auto d = cu::load_driver(INTERPROBE_SIM_CUDA);
  int count = 0, can = 0;
  ASSERT_EQ(d.device_get_count(&count), cu::kSuccess);
  EXPECT_EQ(count, 2);
  ASSERT_EQ(d.device_can_access_peer(&can, 0, 1), cu::kSuccess);
  EXPECT_EQ(can, 1);
  EXPECT_GE(d.version, 12000);
}

TEST_F(SimCuda, PeerAccessFollowsTheMatrix) {
  auto d = load("rtx-pro-6000-8x-kvm-p2p-off.json");
  int can = 1;
  ASSERT_EQ(d.device_can_access_peer(&can, 0, 5), cu::kSuccess);
  EXPECT_EQ(can, 0);
  cu::Context peer = context(d, 5);
  context(d, 0);
  EXPECT_EQ(d.ctx_enable_peer_access(peer, 0), cu::kErrorPeerAccessUnsupported);

  d = load("h100-sxm-8x-nvswitch.json");
  ASSERT_EQ(d.device_can_access_peer(&can, 0, 5), cu::kSuccess);
  EXPECT_EQ(can, 1);
  peer = context(d, 5);
  context(d, 0);
  EXPECT_EQ(d.ctx_enable_peer_access(peer, 0), cu::kSuccess);
  EXPECT_EQ(d.ctx_enable_peer_access(peer, 0), cu::kErrorPeerAccessAlreadyEnabled);
  EXPECT_EQ(d.ctx_disable_peer_access(peer), cu::kSuccess);
  EXPECT_EQ(d.ctx_disable_peer_access(peer), cu::kErrorPeerAccessNotEnabled);
}

// Pinned H2D on the H100 description: 55 GB/s, 2 us per copy.
TEST_F(SimCuda, EventsTimeCopiesByTheLinkModel) {
  auto d = load("h100-sxm-8x-nvswitch.json");
  context(d, 0);
  constexpr std::size_t kBytes = 8u << 20;
  std::vector<unsigned char> host(kBytes);
  fill_pattern(host.data(), kBytes, 7);
  ASSERT_EQ(d.mem_host_register(host.data(), kBytes, cu::kMemHostRegisterPortable), cu::kSuccess);
  cu::DevicePtr dev = alloc(d, kBytes);
  cu::Stream stream = nullptr;
  ASSERT_EQ(d.stream_create(&stream, cu::kStreamNonBlocking), cu::kSuccess);
  cu::Event start = nullptr, stop = nullptr;
  ASSERT_EQ(d.event_create(&start, cu::kEventDefault), cu::kSuccess);
  ASSERT_EQ(d.event_create(&stop, cu::kEventDefault), cu::kSuccess);
  hold(d, stream);
  ASSERT_EQ(d.event_record(start, stream), cu::kSuccess);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(d.memcpy_htod_async(dev, host.data(), kBytes, stream), cu::kSuccess);
  ASSERT_EQ(d.event_record(stop, stream), cu::kSuccess);
  release();
  ASSERT_EQ(d.event_synchronize(stop), cu::kSuccess);
  float ms = 0;
  ASSERT_EQ(d.event_elapsed_time(&ms, start, stop), cu::kSuccess);
  double model_ms = 4 * (2e-6 + kBytes / 55e9) * 1e3;
  EXPECT_NEAR(ms, model_ms, model_ms * 0.01);
  EXPECT_EQ(count_pattern_mismatches(hptr(dev), kBytes, 7), 0u);
  // A staged copy (pageable host memory) uses the pageable model: 20 GB/s, 6 us.
  std::vector<unsigned char> pageable(kBytes);
  hold(d, stream);
  ASSERT_EQ(d.event_record(start, stream), cu::kSuccess);
  ASSERT_EQ(d.memcpy_dtoh_async(pageable.data(), dev, kBytes, stream), cu::kSuccess);
  ASSERT_EQ(d.event_record(stop, stream), cu::kSuccess);
  release();
  ASSERT_EQ(d.stream_synchronize(stream), cu::kSuccess);
  ASSERT_EQ(d.event_elapsed_time(&ms, start, stop), cu::kSuccess);
  EXPECT_NEAR(ms, (6e-6 + kBytes / 20e9) * 1e3, 0.01 * (6e-6 + kBytes / 20e9) * 1e3);
  EXPECT_EQ(count_pattern_mismatches(pageable.data(), kBytes, 7), 0u);
  EXPECT_EQ(d.stream_destroy(stream), cu::kSuccess);
  EXPECT_EQ(d.mem_free(dev), cu::kSuccess);
  EXPECT_EQ(d.mem_host_unregister(host.data()), cu::kSuccess);
}

TEST_F(SimCuda, CorruptPeerCopiesOnlyOnTheDirectPath) {
  auto d = load("a100-pcie-2x-p2p-corrupt.json");
  constexpr std::size_t kBytes = 1u << 20;
  cu::Context c1 = context(d, 1);
  cu::DevicePtr dst = alloc(d, kBytes);
  cu::Context c0 = context(d, 0);
  cu::DevicePtr src = alloc(d, kBytes);
  fill_pattern(hptr(src), kBytes, 3);
  // Peer access off: the driver stages, the data arrives intact.
  ASSERT_EQ(d.memcpy_peer_async(dst, c1, src, c0, kBytes, nullptr), cu::kSuccess);
  EXPECT_EQ(count_pattern_mismatches(hptr(dst), kBytes, 3), 0u);
  ASSERT_EQ(d.ctx_enable_peer_access(c1, 0), cu::kSuccess);
  std::memset(hptr(dst), 0, kBytes);
  ASSERT_EQ(d.memcpy_peer_async(dst, c1, src, c0, kBytes, nullptr), cu::kSuccess);
  EXPECT_GT(count_pattern_mismatches(hptr(dst), kBytes, 3), 0u);
  EXPECT_EQ(d.ctx_disable_peer_access(c1), cu::kSuccess);
}

TEST_F(SimCuda, OutOfMemoryWhenInjectedOrBeyondTheDevicesMemory) {
  sim_load(R"({"devices": [{"memory_bytes": 1048576}]})");
  auto d = cu::load_driver(INTERPROBE_SIM_CUDA);
  context(d, 0);
  cu::DevicePtr p = 0;
  EXPECT_EQ(d.mem_alloc(&p, 2u << 20), cu::kErrorOutOfMemory);
  ASSERT_EQ(d.mem_alloc(&p, 1u << 19), cu::kSuccess);
  std::size_t free_bytes = 0, total = 0;
  ASSERT_EQ(d.mem_get_info(&free_bytes, &total), cu::kSuccess);
  EXPECT_EQ(total, 1048576u);
  EXPECT_EQ(free_bytes, 1048576u - (1u << 19));
  EXPECT_EQ(d.mem_free(p), cu::kSuccess);
  sim_load(R"({"devices": [{}], "faults": {"oom": true}})");
  d = cu::load_driver(INTERPROBE_SIM_CUDA);
  context(d, 0);
  EXPECT_EQ(d.mem_alloc(&p, 4096), cu::kErrorOutOfMemory);
}

TEST_F(SimCuda, RejectsPtxNewerThanItsDriverAsARealDriverDoes) {
  auto d = load("l4-1x-cuda-12.2.json");  // CUDA 12.2: PTX ISA 8.2 at most
  context(d, 0);
  cu::Module m = nullptr;
  EXPECT_EQ(d.module_load_data(&m, ".version 9.0\n.target sm_75\n.visible .entry interprobe_copy()\n{}\n"),
            cu::kErrorUnsupportedPtxVersion);
  EXPECT_EQ(d.module_load_data(&m, ".version 8.4\n.target sm_75\n"), cu::kErrorUnsupportedPtxVersion);
  ASSERT_EQ(d.module_load_data(&m, cuda_kernels::kPtx), cu::kSuccess);
  cu::Function f = nullptr;
  EXPECT_EQ(d.module_get_function(&f, m, "interprobe_fill_pattern"), cu::kSuccess);
  EXPECT_EQ(d.module_get_function(&f, m, "no_such_kernel"), cu::kErrorNotFound);
  EXPECT_EQ(d.module_unload(m), cu::kSuccess);
}

TEST_F(SimCuda, RunsOurKernelsByName) {
  auto d = load("h100-sxm-8x-nvswitch.json");
  context(d, 0);
  cu::Module m = nullptr;
  ASSERT_EQ(d.module_load_data(&m, cuda_kernels::kPtx), cu::kSuccess);
  cu::Function fill = nullptr, count = nullptr, hold = nullptr;
  ASSERT_EQ(d.module_get_function(&fill, m, "interprobe_fill_pattern"), cu::kSuccess);
  ASSERT_EQ(d.module_get_function(&count, m, "interprobe_count_mismatches"), cu::kSuccess);
  ASSERT_EQ(d.module_get_function(&hold, m, "interprobe_hold"), cu::kSuccess);
  std::uint64_t bytes = 100000, seed = 11;
  void* data = hptr(alloc(d, bytes));
  void* fill_args[] = {&data, &bytes, &seed};
  ASSERT_EQ(d.launch_kernel(fill, 64, 1, 1, 512, 1, 1, 0, nullptr, fill_args, nullptr), cu::kSuccess);
  EXPECT_EQ(count_pattern_mismatches(data, bytes, seed), 0u);
  static_cast<unsigned char*>(data)[5] ^= 1;
  auto* bad = static_cast<unsigned long long*>(hptr(alloc(d, 8)));
  *bad = 0;
  void* count_args[] = {&data, &bytes, &seed, &bad};
  ASSERT_EQ(d.launch_kernel(count, 64, 1, 1, 512, 1, 1, 0, nullptr, count_args, nullptr), cu::kSuccess);
  EXPECT_EQ(*bad, 1u);

  // The hold kernel keeps its stream until the host raises the flag.
  int* flags = nullptr;
  ASSERT_EQ(d.mem_host_alloc(reinterpret_cast<void**>(&flags), 2 * sizeof(int), cu::kMemHostAllocDeviceMap), cu::kSuccess);
  flags[0] = flags[1] = 0;
  cu::Stream stream = nullptr;
  ASSERT_EQ(d.stream_create(&stream, cu::kStreamNonBlocking), cu::kSuccess);
  int* flag = flags;
  int* timed_out = flags + 1;
  std::uint64_t timeout_ns = 10'000'000'000ull;
  void* hold_args[] = {&flag, &timed_out, &timeout_ns};
  ASSERT_EQ(d.launch_kernel(hold, 1, 1, 1, 1, 1, 1, 0, stream, hold_args, nullptr), cu::kSuccess);
  cu::Event after = nullptr;
  ASSERT_EQ(d.event_create(&after, cu::kEventDefault), cu::kSuccess);
  ASSERT_EQ(d.event_record(after, stream), cu::kSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(d.event_query(after), cu::kErrorNotReady);
  __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
  ASSERT_EQ(d.stream_synchronize(stream), cu::kSuccess);
  EXPECT_EQ(d.event_query(after), cu::kSuccess);
  EXPECT_EQ(flags[1], 0);
  EXPECT_EQ(d.stream_destroy(stream), cu::kSuccess);
  EXPECT_EQ(d.mem_free_host(flags), cu::kSuccess);
}

TEST_F(SimCuda, AHungPeerCopyNeverCompletesAndItsStreamCanStillBeDestroyed) {
  sim_load(R"({"devices": [{}, {}], "faults": {"hang_peer_copies": true}})");
  auto d = cu::load_driver(INTERPROBE_SIM_CUDA);
  cu::Context c1 = context(d, 1);
  cu::DevicePtr dst = alloc(d, 4096);
  cu::Context c0 = context(d, 0);
  cu::DevicePtr src = alloc(d, 4096);
  ASSERT_EQ(d.ctx_enable_peer_access(c1, 0), cu::kSuccess);
  cu::Stream stream = nullptr;
  ASSERT_EQ(d.stream_create(&stream, cu::kStreamNonBlocking), cu::kSuccess);
  cu::Event done = nullptr;
  ASSERT_EQ(d.event_create(&done, cu::kEventDefault), cu::kSuccess);
  ASSERT_EQ(d.memcpy_peer_async(dst, c1, src, c0, 4096, stream), cu::kSuccess);
  ASSERT_EQ(d.event_record(done, stream), cu::kSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(d.event_query(done), cu::kErrorNotReady);
  EXPECT_EQ(d.stream_destroy(stream), cu::kSuccess);
}

TEST_F(SimCuda, ABrokenDescriptionIsRefused) {
  void* handle = dlopen(INTERPROBE_SIM_CUDA, RTLD_NOW);
  ASSERT_NE(handle, nullptr);
  auto load = reinterpret_cast<int (*)(const char*)>(dlsym(handle, "interprobe_sim_load"));
  EXPECT_NE(load(R"({"devices": [{}], "peer_access": "sometimes"})"), 0);
  EXPECT_NE(load("not json"), 0);
}

}  // namespace
