// The simulated libnvidia-ml.so.1 (tests/sim/nvml): interprobe's own NVML reader sees the devices
// of a description (count, names, UUIDs, bus ids, memory, NVLinks, P2P status, virtualization
// mode), the telemetry counters move with time, and the topology command marks it simulated.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "probes/topology/nvml_topology.hpp"
#include "model/json.hpp"
#include "support/run_binary.hpp"
#include "support/temp_tree.hpp"

namespace fs = std::filesystem;
using interprobe::testing::run_interprobe;

namespace {

const std::string kH100 = std::string(INTERPROBE_SIM_DEVICES) + "/h100-sxm-8x-nvswitch.json";
const std::string kKvm = std::string(INTERPROBE_SIM_DEVICES) + "/rtx-pro-6000-8x-kvm-p2p-off.json";

// The simulator reads its description once per process; gtest_discover_tests runs each test in
// its own process, so each test may choose one.
std::optional<interprobe::NvmlTopology> query(const std::string& description, std::string* reason) {
  ::setenv("INTERPROBE_NVML_LIB", INTERPROBE_SIM_NVML, 1);
  ::setenv("INTERPROBE_SIM_CONFIG", description.c_str(), 1);
  return interprobe::query_live_nvml(reason);
}

std::vector<std::string> sim_env(const std::string& description) {
  return {std::string("INTERPROBE_NVML_LIB=") + INTERPROBE_SIM_NVML, "INTERPROBE_SIM_CONFIG=" + description};
}

}  // namespace

TEST(SimulatedNvml, ServesTheH100DescriptionsEightGpusWithEighteenNvSwitchLinksEach) {
  std::string reason;
  auto t = query(kH100, &reason);
  ASSERT_TRUE(t) << reason;
  EXPECT_EQ(t->source, interprobe::report::NvmlSource::live);
  EXPECT_EQ(t->driver_version, "550.54.15");
  ASSERT_EQ(t->gpus.size(), 8u);
  EXPECT_EQ(t->gpus[0].bdf, "0000:18:00.0");
  EXPECT_EQ(t->gpus[7].bdf, "0000:db:00.0");
  std::set<std::string> uuids;
  for (const auto& g : t->gpus) {
    EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(g.memory_total_bytes, 85520809984);
    EXPECT_EQ(g.bar1_total_bytes, 137438953472);
    EXPECT_EQ(g.virtualization_mode, interprobe::report::VirtualizationMode::none);
    EXPECT_EQ(g.compute_capability, "9.0");  // nvmlDeviceGetCudaComputeCapability: decides version 7's rate
    ASSERT_TRUE(g.uuid);
    uuids.insert(*g.uuid);
    ASSERT_EQ(g.nvlinks.size(), 18u) << g.bdf;
    for (const auto& l : g.nvlinks) {
      EXPECT_EQ(l.active, true);
      EXPECT_EQ(l.version, 7);  // nvmlNvlinkVersion_t: what Hopper reports
      EXPECT_EQ(l.remote_kind, interprobe::report::NvLinkRemoteKind::nvswitch);
    }
  }
  EXPECT_EQ(uuids.size(), 8u);
  ASSERT_EQ(t->p2p.size(), 28u);  // every pair once
  for (const auto& p : t->p2p) {
    EXPECT_EQ(p.status.read, interprobe::report::P2pCapability::ok);
    EXPECT_EQ(p.status.nvlink, interprobe::report::P2pCapability::ok);
  }
}

TEST(SimulatedNvml, AKvmGuestWithPeerAccessOffIsPassthroughWithoutP2p) {
  std::string reason;
  auto t = query(kKvm, &reason);
  ASSERT_TRUE(t) << reason;
  ASSERT_EQ(t->gpus.size(), 8u);
  for (const auto& g : t->gpus) {
    EXPECT_EQ(g.virtualization_mode, interprobe::report::VirtualizationMode::passthrough);
    EXPECT_TRUE(g.nvlinks.empty());
  }
  for (const auto& p : t->p2p) {
    EXPECT_EQ(p.status.read, interprobe::report::P2pCapability::chipset_not_supported);
    EXPECT_EQ(p.status.nvlink, interprobe::report::P2pCapability::not_supported);
  }
}

TEST(SimulatedNvml, DirectNvLinksReachPeerGpus) {
  interprobe::testing::TempTree tree;
  std::string description = (tree.path() / "direct.json").string();
  std::ofstream(description) << R"({"devices": [{}, {}], "nvml": {"nvlinks_per_gpu": 4, "nvlink_remote": "gpu", "nvlink_version": 4}})";
  std::string reason;
  auto t = query(description, &reason);
  ASSERT_TRUE(t) << reason;
  ASSERT_EQ(t->gpus.size(), 2u);
  ASSERT_EQ(t->gpus[0].nvlinks.size(), 4u);
  EXPECT_EQ(t->gpus[0].nvlinks[0].remote_kind, interprobe::report::NvLinkRemoteKind::gpu);
  EXPECT_EQ(t->gpus[0].nvlinks[0].remote_bdf, t->gpus[1].bdf);
  ASSERT_EQ(t->p2p.size(), 1u);
  EXPECT_EQ(t->p2p[0].status.nvlink, interprobe::report::P2pCapability::ok);
}

TEST(SimulatedNvml, ABrokenDescriptionMakesInitFailWithAReason) {
  interprobe::testing::TempTree tree;
  std::string description = (tree.path() / "bad.json").string();
  std::ofstream(description) << R"({"devices": [{}], "nvml": {"nvlinks_per_gpu": 40}})";
  std::string reason;
  EXPECT_FALSE(query(description, &reason));
  EXPECT_NE(reason.find("nvmlInit_v2 failed"), std::string::npos) << reason;
}

// Power, SM clock, utilization: plausible for an H100 and moving with time (a triangle wave).
TEST(SimulatedNvml, TelemetryCountersArePlausibleAndMove) {
  ::setenv("INTERPROBE_SIM_CONFIG", kH100.c_str(), 1);
  void* h = ::dlopen(INTERPROBE_SIM_NVML, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << ::dlerror();
  using Init = int();
  using Handle = int(unsigned, void**);
  using Power = int(void*, unsigned*);
  using Clock = int(void*, int, unsigned*);
  struct Util { unsigned gpu, memory; };
  using Utilization = int(void*, Util*);
  using Ancestor = int(void*, void*, int*);
  auto* init = reinterpret_cast<Init*>(::dlsym(h, "nvmlInit_v2"));
  auto* handle = reinterpret_cast<Handle*>(::dlsym(h, "nvmlDeviceGetHandleByIndex_v2"));
  auto* power = reinterpret_cast<Power*>(::dlsym(h, "nvmlDeviceGetPowerUsage"));
  auto* clock = reinterpret_cast<Clock*>(::dlsym(h, "nvmlDeviceGetClockInfo"));
  auto* util = reinterpret_cast<Utilization*>(::dlsym(h, "nvmlDeviceGetUtilizationRates"));
  auto* ancestor = reinterpret_cast<Ancestor*>(::dlsym(h, "nvmlDeviceGetTopologyCommonAncestor"));
  ASSERT_TRUE(init && handle && power && clock && util && ancestor);
  ASSERT_EQ(init(), 0);
  void* d0 = nullptr;
  void* d3 = nullptr;
  void* d4 = nullptr;
  ASSERT_EQ(handle(0, &d0), 0);
  ASSERT_EQ(handle(3, &d3), 0);
  ASSERT_EQ(handle(4, &d4), 0);
  unsigned mhz = 0;
  ASSERT_EQ(clock(d0, 1, &mhz), 0);
  EXPECT_EQ(mhz, 1980u);
  int level = -1;
  ASSERT_EQ(ancestor(d0, d3, &level), 0);
  EXPECT_EQ(level, 40);  // same socket (buses below 0x80)
  ASSERT_EQ(ancestor(d0, d4, &level), 0);
  EXPECT_EQ(level, 50);  // across sockets
  unsigned first_mw = 0, later_mw = 0;
  Util first{}, later{};
  ASSERT_EQ(power(d0, &first_mw), 0);
  ASSERT_EQ(util(d0, &first), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(power(d0, &later_mw), 0);
  ASSERT_EQ(util(d0, &later), 0);
  for (unsigned mw : {first_mw, later_mw}) {
    EXPECT_GE(mw, 70000u);
    EXPECT_LE(mw, 700000u);
  }
  EXPECT_LE(later.gpu, 100u);
  EXPECT_NE(first_mw, later_mw);  // 300 ms of a 10 s wave: about 6 % utilization, 38 W
  ::dlclose(h);
}

// Topology on this machine, whose sysfs has no NVIDIA GPU: the probe does not load NVML at all
// (its reason says why), so the simulated NVML only reaches `topo` through a recording below.
TEST(SimulatedNvml, LiveTopoWithoutSysfsGpusDoesNotAskNvml) {
  auto p = run_interprobe({"topo", "--json"}, sim_env(kH100));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  ASSERT_TRUE(r.topology);
  if (!r.topology->gpus.empty()) GTEST_SKIP() << "this machine has NVIDIA GPUs in sysfs";
  EXPECT_EQ(r.topology->nvml_reason, "no NVIDIA GPU in the PCI inventory");
  EXPECT_FALSE(r.topology->nvml_source);
  EXPECT_FALSE(r.tool.libraries.count("nvml"));
}

// End to end over the recorded HGX tree: record the simulator's NVML (in process: `topo
// --record-nvml` refuses without sysfs GPUs) and replay it with the tree's sysfs, whose GPUs sit at
// the description's bus ids: 8 GPUs named by NVML with 18 NVLinks each and NVML's P2P status.
TEST(SimulatedNvml, ARecordingOfTheSimulatorReplaysOverTheHgxTree) {
  interprobe::testing::TempTree tree(fs::path(INTERPROBE_FIXTURES) / "topology" / "hgx-h100-nvswitch");
  std::string reason;
  auto t = query(kH100, &reason);
  ASSERT_TRUE(t) << reason;
  std::ofstream(tree.path() / "nvml.json", std::ios::trunc) << interprobe::encode_nvml_recording(*t);
  auto p = run_interprobe({"topo", "--root", tree.path().string(), "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  ASSERT_TRUE(r.topology);
  EXPECT_EQ(r.topology->nvml_source, interprobe::report::NvmlSource::recorded);
  ASSERT_EQ(r.topology->gpus.size(), 8u);
  for (const auto& g : r.topology->gpus) {
    EXPECT_EQ(g.nvlinks.size(), 18u) << g.bdf;
    EXPECT_TRUE(g.uuid && g.uuid->rfind("GPU-5151a000", 0) == 0) << g.bdf;
  }
}
