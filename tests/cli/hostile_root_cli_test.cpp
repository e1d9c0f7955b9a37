// The binary on a hostile --root tree (issue 11): FIFOs where files are read, device nodes at
// /proc/cpuinfo and /proc/mounts, absolute links from the CPU topology to a canary outside.
// Every command ends within its limit with exit 0 or 2 and nothing from the canary shows up.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/temp_tree.hpp"

namespace fs = std::filesystem;
using interprobe::testing::TempTree;

namespace {

struct Outcome {
  bool timed_out = false;
  int exit_code = -1;
  std::string out, err;
};

// run_interprobe with a time limit: a hang is a failure, not a stuck suite.
Outcome run_limited(const std::vector<std::string>& args, std::chrono::seconds limit) {
  TempTree io;
  fs::path out = io.path() / "out", err = io.path() / "err";
  pid_t pid = ::fork();
  if (pid == 0) {
    (void)!::freopen("/dev/null", "r", stdin);
    (void)!::freopen(out.c_str(), "w", stdout);
    (void)!::freopen(err.c_str(), "w", stderr);
    std::string binary = INTERPROBE_BINARY;
    std::vector<char*> argv{binary.data()};
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    std::_Exit(127);
  }
  Outcome o;
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      o.timed_out = true;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::stringstream o_text, e_text;
  o_text << std::ifstream(out).rdbuf();
  e_text << std::ifstream(err).rdbuf();
  o.out = o_text.str();
  o.err = e_text.str();
  return o;
}

class HostileRootCli : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
             {"physical_package_id", "77"}, {"core_id", "0"}, {"core_cpus_list", "4"}, {"package_cpus_list", "4-7"}})
      canary_.write(name, value + "\n");
    for (int cpu = 4; cpu < 8; ++cpu) {
      std::string topology = "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology";
      fs::remove_all(tree_.path() / topology);
      tree_.relink(topology, canary_.path().string());
    }
    for (const char* p : {"sys/class/dmi/id/product_name", "sys/devices/system/cpu/online", "proc/self/cgroup",
                          "cpuid.txt", "nvml.json", "sys/devices/system/node/node0/cpulist"})
      fifo(p);
    fifo(fs::relative(tree_.device("0000:05:00.0"), tree_.path()) / "numa_node");
    for (const char* p : {"proc/cpuinfo", "proc/mounts"}) {
      fs::remove(tree_.path() / p);
      fs::create_directories((tree_.path() / p).parent_path());
      // /dev/zero's numbers; without CAP_MKNOD a FIFO stands in for it.
      if (::mknod((tree_.path() / p).c_str(), S_IFCHR | 0644, makedev(1, 5)) != 0) fifo(p);
    }
  }
  void fifo(const fs::path& relative) {
    fs::path where = tree_.path() / relative;
    fs::remove(where);
    fs::create_directories(where.parent_path());
    ASSERT_EQ(::mkfifo(where.c_str(), 0644), 0) << where;
  }
  void expect_ends_cleanly(const std::vector<std::string>& args) {
    auto o = run_limited(args, std::chrono::seconds(60));
    std::string what = args.front();
    EXPECT_FALSE(o.timed_out) << what << " did not end within 60 s";
    EXPECT_TRUE(o.exit_code == 0 || o.exit_code == 2) << what << " exit " << o.exit_code << "\n" << o.err;
    EXPECT_EQ(o.out.find("\"id\": 77"), std::string::npos) << what << " read the canary outside the root";
  }
  TempTree canary_;
  TempTree tree_{fs::path(INTERPROBE_FIXTURES) / "topology/baremetal-2s-8gpu-pcie"};
};

TEST_F(HostileRootCli, TopoVirtRunAndSnapshotEndWithinTheirLimit) {
  expect_ends_cleanly({"topo", "--root", tree_.path().string(), "--json"});
  expect_ends_cleanly({"virt", "--root", tree_.path().string(), "--json"});
  TempTree out;
  expect_ends_cleanly({"run", "--root", tree_.path().string(), "-q", "-o", (out.path() / "r.json").string()});
  expect_ends_cleanly({"snapshot", "--root", tree_.path().string(), "-q", "-o", (out.path() / "snap").string()});
  // Without the FIFO cpuid.txt (an input error, exit 2 up front) every probe and the capture run.
  fs::remove(tree_.path() / "cpuid.txt");
  expect_ends_cleanly({"topo", "--root", tree_.path().string(), "--json"});
  expect_ends_cleanly({"snapshot", "--root", tree_.path().string(), "-q", "-o", (out.path() / "snap2").string()});
  std::stringstream manifest;
  manifest << std::ifstream(out.path() / "snap2/manifest.json").rdbuf();
  EXPECT_NE(manifest.str().find("\"path\": \"/proc/cpuinfo\""), std::string::npos) << manifest.str();
  auto topo = run_limited({"topo", "--root", tree_.path().string(), "--json"}, std::chrono::seconds(60));
  EXPECT_EQ(topo.exit_code, 0) << topo.err;
  EXPECT_NE(topo.out.find("hwloc was not given the --root tree"), std::string::npos) << topo.out.substr(0, 2000);
}

TEST_F(HostileRootCli, UnreadableManifestIsNamedNotCalledInvalidJson) {
  fifo("manifest.json");
  auto o = run_limited({"topo", "--root", tree_.path().string()}, std::chrono::seconds(30));
  EXPECT_FALSE(o.timed_out);
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("manifest.json cannot be read: not a regular file"), std::string::npos) << o.err;
}

TEST(SizePlanCli, AFactorThatPlansMillionsOfSizesIsRefused) {
  auto o = run_limited({"bw", "--engine", "host", "--min", "4K", "--max", "1G", "--factor", "1.000001", "-q"},
                       std::chrono::seconds(30));
  EXPECT_FALSE(o.timed_out);
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("more than 1000 sizes"), std::string::npos) << o.err;
}

}  // namespace
