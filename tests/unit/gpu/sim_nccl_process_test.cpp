// The simulated libnccl's multi-process communicators without MPI: two forked processes load the
// simulated libcuda and libnccl, join one unique id (ncclCommInitRank) and all-reduce host
// buffers on a simulated stream. Checks the sums, that the shared-memory rendezvous is gone once
// both joined, and that a dead or missing peer is ncclRemoteError within nccl.peer_timeout_s.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct UniqueId {
  char internal[128];
};
constexpr int kRemoteError = 6, kFloat32 = 7, kBfloat16 = 9;
constexpr std::size_t kMagicBytes = sizeof "interprobe-sim-nccl 1";  // the id's name follows it

// The simulated libraries in a child process, with the entry points these tests call.
struct Rank {
  int rank = 0;
  void* stream = nullptr;
  void* comm = nullptr;
  int (*all_reduce)(const void*, void*, std::size_t, int, int, void*, void*) = nullptr;
  int (*async_error)(void*, int*) = nullptr;
  int (*abort)(void*) = nullptr;
  int (*stream_query)(void*) = nullptr;

  template <class Fn>
  static Fn* entry(void* lib, const char* name) {
    return reinterpret_cast<Fn*>(dlsym(lib, name));
  }

  // Until the stream is idle (0), an asynchronous error (its code), or `limit_s` (-1).
  int wait(double limit_s) const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
    while (std::chrono::steady_clock::now() < until) {
      int async = 0;
      async_error(comm, &async);
      if (async != 0) return async;
      if (stream_query(stream) == 0) return 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return -1;
  }
};

// Loads the libraries and joins `id`; the InitRank result goes to *rc.
Rank start_rank(const UniqueId& id, int rank, int* rc) {
  Rank r;
  r.rank = rank;
  void* cuda = dlopen(INTERPROBE_SIM_CUDA, RTLD_NOW | RTLD_GLOBAL);
  void* nccl = dlopen(INTERPROBE_SIM_NCCL, RTLD_NOW);
  if (!cuda || !nccl) std::_Exit(90);
  void* ctx = nullptr;
  Rank::entry<int(unsigned)>(cuda, "cuInit")(0);
  Rank::entry<int(void**, int)>(cuda, "cuDevicePrimaryCtxRetain")(&ctx, rank);
  Rank::entry<int(void*)>(cuda, "cuCtxSetCurrent")(ctx);
  Rank::entry<int(void**, unsigned)>(cuda, "cuStreamCreate")(&r.stream, 1);
  r.stream_query = Rank::entry<int(void*)>(cuda, "cuStreamQuery");
  r.all_reduce = Rank::entry<int(const void*, void*, std::size_t, int, int, void*, void*)>(nccl, "ncclAllReduce");
  r.async_error = Rank::entry<int(void*, int*)>(nccl, "ncclCommGetAsyncError");
  r.abort = Rank::entry<int(void*)>(nccl, "ncclCommAbort");
  *rc = Rank::entry<int(void**, int, UniqueId, int)>(nccl, "ncclCommInitRank")(&r.comm, 2, id, rank);
  return r;
}

class SimNcclProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/interprobe-sim-nccl-test-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    void* nccl = dlopen(INTERPROBE_SIM_NCCL, RTLD_NOW);
    ASSERT_NE(nccl, nullptr) << dlerror();
    ASSERT_EQ(Rank::entry<int(UniqueId*)>(nccl, "ncclGetUniqueId")(&id_), 0);
    segment_ = fs::path("/dev/shm") / (id_.internal + kMagicBytes + 1);  // the name is "/interprobe-sim-nccl-..."
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `body(rank)` in two child processes (description `json`); their lines, rank by rank.
  std::vector<std::string> run_two(const std::string& json, const std::function<std::string(int)>& body) {
    std::ofstream(dir_ / "machine.json") << json;
    std::vector<pid_t> pids;
    for (int rank = 0; rank < 2; ++rank) {
      pid_t pid = ::fork();
      if (pid == 0) {
        ::setenv("INTERPROBE_SIM_CONFIG", (dir_ / "machine.json").c_str(), 1);
        std::ofstream(dir_ / ("rank" + std::to_string(rank))) << body(rank);
        std::_Exit(0);
      }
      pids.push_back(pid);
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (pid_t pid : pids) {
      int status = 0;
      while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > until) {
          ::kill(pid, SIGKILL);
          ADD_FAILURE() << "a rank still runs after 20 s: a hang";
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    std::vector<std::string> lines;
    for (int rank = 0; rank < 2; ++rank) {
      std::ifstream in(dir_ / ("rank" + std::to_string(rank)));
      std::getline(in, lines.emplace_back());
    }
    return lines;
  }

  fs::path dir_;
  UniqueId id_{};
  fs::path segment_;
};

TEST_F(SimNcclProcesses, TwoRanksSumAcrossChunksAndTheRendezvousIsGone) {
  auto lines = run_two(R"({"devices": [{}, {}], "nccl": {"bus_gbps": 1000, "latency_us": 1}})", [&](int rank) {
    int rc = -1;
    Rank r = start_rank(id_, rank, &rc);
    if (rc != 0) return "ncclCommInitRank " + std::to_string(rc);
    if (fs::exists(segment_)) return std::string("the segment outlived the join");
    // 3 Mi floats (12 MiB: three of the simulator's 4 MiB chunks) and an in-place bfloat16 call.
    std::vector<float> send(3u << 20), recv(send.size(), -1.0f);
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<float>((i % 100) * (rank + 1));
    std::vector<std::uint16_t> bf(1000, 0x3f80);  // 1.0 each
    if (r.all_reduce(send.data(), recv.data(), send.size(), kFloat32, 0, r.comm, r.stream) != 0 ||
        r.all_reduce(bf.data(), bf.data(), bf.size(), kBfloat16, 0, r.comm, r.stream) != 0)
      return std::string("ncclAllReduce failed");
    if (int w = r.wait(10); w != 0) return "wait " + std::to_string(w);
    for (std::size_t i = 0; i < send.size(); ++i)
      if (recv[i] != static_cast<float>((i % 100) * 3)) return "float element " + std::to_string(i) + " = " + std::to_string(recv[i]);
    for (auto b : bf)
      if (b != 0x4000) return "bfloat16 element " + std::to_string(b);  // 2.0
    return std::string("ok");
  });
  EXPECT_EQ(lines[0], "ok");
  EXPECT_EQ(lines[1], "ok");
  EXPECT_FALSE(fs::exists(segment_));
}

TEST_F(SimNcclProcesses, ADeadPeerIsARemoteErrorWithinThePeerTimeout) {
  auto lines = run_two(R"({"devices": [{}, {}], "nccl": {"peer_timeout_s": 1}})", [&](int rank) {
    int rc = -1;
    Rank r = start_rank(id_, rank, &rc);
    if (rc != 0) return "ncclCommInitRank " + std::to_string(rc);
    if (rank == 1) std::_Exit(0);  // dies before its first all-reduce
    std::vector<float> data(1024, 1.0f);
    const auto started = std::chrono::steady_clock::now();
    r.all_reduce(data.data(), data.data(), data.size(), kFloat32, 0, r.comm, r.stream);
    const int w = r.wait(10);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    r.abort(r.comm);  // releases the stream, as interprobe's watchdog does (the handle is gone)
    bool released = false;
    for (int polls = 0; polls < 5000 && !released; ++polls) {
      released = r.stream_query(r.stream) == 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return "async " + std::to_string(w) + (waited < 5 ? " in time" : " late") + (released ? " released" : " stuck");
  });
  EXPECT_EQ(lines[0], "async " + std::to_string(kRemoteError) + " in time released");
}

TEST_F(SimNcclProcesses, ARankWhosePeerNeverJoinsGetsARemoteErrorAndRemovesTheRendezvous) {
  auto lines = run_two(R"({"devices": [{}, {}], "nccl": {"peer_timeout_s": 1}})", [&](int rank) {
    if (rank == 1) return std::string("absent");
    int rc = -1;
    const auto started = std::chrono::steady_clock::now();
    start_rank(id_, rank, &rc);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return "init " + std::to_string(rc) + (waited < 5 ? " in time" : " late");
  });
  EXPECT_EQ(lines[0], "init " + std::to_string(kRemoteError) + " in time");
  EXPECT_FALSE(fs::exists(segment_));
}

}  // namespace

namespace {

// Issue 31 point 11: real NCCL's ncclCommInitAll (src/init.cc) saves the runtime's device
// (cudaGetDevice: 0 without a current context), sets each rank's device, and restores the saved
// one at exit: that device's primary context is current afterwards. The simulated one does the same,
// so interprobe's code, which sets its context itself, is tested against what the real one leaves.
TEST(SimNcclInProcess, InitAllLeavesTheCallersDeviceCurrentAsNcclDoes) {
  void* cuda = dlopen(INTERPROBE_SIM_CUDA, RTLD_NOW | RTLD_GLOBAL);
  void* nccl = dlopen(INTERPROBE_SIM_NCCL, RTLD_NOW);
  ASSERT_TRUE(cuda && nccl) << dlerror();
  ASSERT_EQ(Rank::entry<int(unsigned)>(cuda, "cuInit")(0), 0);  // the default description: 2 GPUs
  auto current = Rank::entry<int()>(cuda, "interprobe_sim_current_device");
  auto init_all = Rank::entry<int(void**, int, const int*)>(nccl, "ncclCommInitAll");
  auto destroy = Rank::entry<int(void*)>(nccl, "ncclCommDestroy");
  ASSERT_EQ(current(), -1);
  void* comms[2] = {};
  const int last_is_0[2] = {1, 0}, last_is_1[2] = {0, 1};
  // No context before: device 0's after (cudaGetDevice answered 0), whichever device init set last.
  ASSERT_EQ(init_all(comms, 2, last_is_1), 0);
  EXPECT_EQ(current(), 0);
  for (void* c : comms) destroy(c);
  // Device 1 current before: device 1 after, though init set device 0 last.
  void* ctx = nullptr;
  Rank::entry<int(void**, int)>(cuda, "cuDevicePrimaryCtxRetain")(&ctx, 1);
  Rank::entry<int(void*)>(cuda, "cuCtxSetCurrent")(ctx);
  ASSERT_EQ(init_all(comms, 2, last_is_0), 0);
  EXPECT_EQ(current(), 1);
  for (void* c : comms) destroy(c);
}

}  // namespace
