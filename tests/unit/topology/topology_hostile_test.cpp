// Hostile --root trees against the CPU/NUMA readers (issue 11): hwloc is never handed a tree
// whose links lead out of it, cpulists are parsed in linear time with a CPU limit, and machine
// numbers that overflow are dropped instead of wrapping.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "interprobe/build_config.hpp"
#include "common/host_root.hpp"
#include "common/text.hpp"
#include "probes/host/system_probe.hpp"
#include "probes/topology/cpu_numa.hpp"
#include "topology_test_support.hpp"

namespace interprobe {
namespace {

namespace fs = std::filesystem;
using topology_test::TempTree;

bool has(const std::vector<std::string>& warnings, const std::string& needle) {
  for (const auto& w : warnings)
    if (w.find(needle) != std::string::npos) return true;
  return false;
}

TEST(HostileTopology, HwlocNeverFollowsALinkOutOfTheTree) {
  // A canary CPU outside the tree, package 77; the tree's cpu4..7 point at it absolutely.
  testing::TempTree outside;
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"physical_package_id", "77"}, {"core_id", "0"}, {"die_id", "0"}, {"core_cpus_list", "4"},
           {"thread_siblings_list", "4"}, {"core_siblings_list", "4-7"}, {"package_cpus_list", "4-7"}})
    outside.write(name, value + "\n");
  TempTree tree("baremetal-2s-8gpu-pcie");
  for (int cpu = 4; cpu < 8; ++cpu) {
    std::string topology = "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology";
    fs::remove_all(tree.path() / topology);
    tree.relink(topology, outside.path().string());
  }
  HostRoot root(tree.path());
  std::vector<std::string> warnings;
  report::CpuTopology cpu = read_cpu_topology(root, warnings);
  for (const auto& package : cpu.packages) EXPECT_NE(package.id, 77) << "read from " << outside.path();
  EXPECT_NE(cpu.packages_source, report::PackagesSource::hwloc);
#if INTERPROBE_HAVE_HWLOC
  EXPECT_TRUE(has(warnings, "hwloc was not given the --root tree, because /sys/devices/system/cpu/cpu"));
  EXPECT_TRUE(has(warnings, "/topology is an absolute symlink to " + outside.path().string()));
#endif
}

TEST(HostileTopology, CleanTreeStillGoesToHwloc) {
  TempTree tree("baremetal-2s-8gpu-pcie");
  HostRoot root(tree.path());
  std::vector<std::string> warnings;
  report::CpuTopology cpu = read_cpu_topology(root, warnings);
  EXPECT_FALSE(has(warnings, "was not given the --root tree"));
#if INTERPROBE_HAVE_HWLOC
  EXPECT_EQ(cpu.packages_source, report::PackagesSource::hwloc);
#endif
  EXPECT_EQ(cpu.packages.size(), 2u);
}

TEST(HostileTopology, CpulistIsLinearAndCapped) {
  std::string text;
  for (int i = 0; i < 10000; ++i) text += (i ? "," : "") + std::string("0-65535");
  auto started = std::chrono::steady_clock::now();
  auto cpus = parse_cpulist(text);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));  // was 29 s
  ASSERT_TRUE(cpus);
  EXPECT_EQ(cpus->size(), 65536u);
  EXPECT_EQ(parse_cpulist("0-3,2-5,8")->size(), 7u);  // overlapping ranges counted once
  std::string why;
  EXPECT_FALSE(parse_cpulist("0-4294967296", &why));
  EXPECT_NE(why.find("limit of 65536 CPUs"), std::string::npos) << why;
  EXPECT_FALSE(parse_cpulist("3-1", &why));
  EXPECT_NE(why.find("'3-1' is not a CPU"), std::string::npos) << why;
}

TEST(HostileTopology, CpuOnlineBeyondTheLimitIsAWarningNamingIt) {
  TempTree tree("baremetal-2s-8gpu-pcie");
  tree.write("sys/devices/system/cpu/online", "0-99999\n");
  HostRoot root(tree.path());
  std::vector<std::string> warnings;
  report::CpuTopology cpu = read_cpu_topology(root, warnings);
  EXPECT_FALSE(cpu.logical_cpus);
  EXPECT_TRUE(has(warnings, "/sys/devices/system/cpu/online: garbage (CPU 99999 is beyond the limit of 65536 CPUs)"));
}

TEST(HostileTopology, MemorySizesThatOverflowAreDropped) {
  TempTree tree("baremetal-2s-8gpu-pcie");
  tree.write("proc/meminfo", "MemTotal:       18014398509481984 kB\nMemAvailable: 9223372036854775807 kB\n");
  tree.write("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       18014398509481984 kB\n");
  HostRoot root(tree.path());
  EXPECT_FALSE(read_system(root).memory_bytes);  // was 0 ("0 B") after a signed overflow
  std::vector<std::string> warnings;
  report::CpuTopology cpu = read_cpu_topology(root, warnings);
  ASSERT_FALSE(cpu.numa_nodes.empty());
  EXPECT_FALSE(cpu.numa_nodes.front().memory_bytes);
  EXPECT_EQ(kib_to_bytes(std::int64_t{1} << 53), std::nullopt);  // 2^63 bytes
  EXPECT_EQ(kib_to_bytes((std::int64_t{1} << 53) - 1), INT64_MAX - 1023);
  EXPECT_EQ(kib_to_bytes(-1), std::nullopt);
  EXPECT_EQ(parse_kib_as_bytes("131860388 kB"), std::int64_t{131860388} * 1024);
}

}  // namespace
}  // namespace interprobe
