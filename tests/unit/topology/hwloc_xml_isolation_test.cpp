// --hwloc-xml is foreign input to a library that crashes or loops on some malformed files:
// hwloc reads it in a child process, and whatever happens there is an InputError naming the
// file. run_isolated is the mechanism; its own cases are tested here too.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "interprobe/build_config.hpp"
#include "common/errors.hpp"
#include "common/isolated_call.hpp"
#include "probes/topology/hwloc_xml.hpp"
#include "topology_test_support.hpp"
#include "support/temp_tree.hpp"

namespace interprobe {
namespace {

namespace fs = std::filesystem;
using interprobe::testing::TempTree;
using Ended = IsolatedResult::Ended;
using Clock = std::chrono::steady_clock;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The message of the InputError read_hwloc_xml throws, or "" when it loaded.
std::string load_error(const fs::path& file, const IsolationLimits& limits = {}) {
  report::TopologySection s;
  NvmlTopology gpus;
  try {
    read_hwloc_xml(file.string(), s, gpus, limits);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(IsolatedCall, AnswerComesBack) {
  auto r = run_isolated([] { return std::string("canonical\0xml", 13); });
  EXPECT_EQ(r.ended, Ended::answered);
  EXPECT_EQ(r.answer, std::string("canonical\0xml", 13));
}

TEST(IsolatedCall, ExceptionIsAFailureWithItsMessage) {
  auto r = run_isolated([]() -> std::string { throw InputError("bad file"); });
  EXPECT_EQ(r.ended, Ended::failed);
  EXPECT_EQ(r.answer, "bad file");
}

TEST(IsolatedCall, CrashEndsTheChildOnly) {
  auto r = run_isolated([]() -> std::string {
    std::raise(SIGSEGV);
    return "survived";
  });
  EXPECT_EQ(r.ended, Ended::crashed);
  EXPECT_TRUE(r.signal == SIGSEGV || r.signal == SIGABRT) << r.signal;  // ASan turns it into an abort
  EXPECT_TRUE(r.answer.empty());
  auto aborted = run_isolated([]() -> std::string { std::abort(); });
  EXPECT_EQ(aborted.ended, Ended::crashed);
  EXPECT_EQ(aborted.signal, SIGABRT);
}

TEST(IsolatedCall, HangIsKilledAtTheTimeout) {
  auto started = Clock::now();
  auto r = run_isolated(
      []() -> std::string {
        ::sleep(60);
        return "late";
      },
      {.timeout_s = 0.5});
  EXPECT_EQ(r.ended, Ended::timed_out);
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(5));
}

TEST(IsolatedCall, OversizedAnswerIsRefused) {
  auto r = run_isolated([] { return std::string(3 << 20, 'x'); }, {.max_answer_bytes = 1 << 20});
  EXPECT_EQ(r.ended, Ended::too_large);
  EXPECT_TRUE(r.answer.empty());
}

TEST(IsolatedCall, RunawayAllocationEndsInTheChild) {
  auto r = run_isolated(
      [] {
        std::string huge(std::size_t{8} << 30, 'x');  // 8 GiB, over the 256 MiB allowed
        return huge.substr(0, 1);
      },
      {.max_extra_memory_bytes = std::uint64_t{256} << 20});
  // bad_alloc in a plain build; a sanitizer's allocator may abort instead.
  EXPECT_TRUE(r.ended == Ended::failed || r.ended == Ended::crashed) << static_cast<int>(r.ended);
}

#if INTERPROBE_HAVE_HWLOC

TEST(HwlocXmlIsolation, RunawayAllocationOnAHostileFileIsAnInputErrorNamingIt) {
  // A PU and a NUMA node numbered 2^32-2: libhwloc 2.9 allocates a 512 MiB bitmap for each
  // index space, 1.2 GB resident from a 30 KB file (found by fuzzing the fixture exports).
  TempTree dir;
  std::string xml = slurp(topology_test::fixture_dir("") / "hgx-h100-nvswitch.hwloc.xml");
  std::string hostile = std::regex_replace(xml, std::regex("type=\"PU\" os_index=\"7\""), "type=\"PU\" os_index=\"4294967294\"");
  hostile = std::regex_replace(hostile, std::regex("type=\"NUMANode\" os_index=\"1\""), "type=\"NUMANode\" os_index=\"4294967294\"");
  ASSERT_NE(hostile, xml);
  auto file = dir.path() / "greedy.xml";
  std::ofstream(file) << hostile;
  // Loaded directly, this process grew to 1.2 GB; now only the child does, within its cap.
  std::string msg = load_error(file, {.max_extra_memory_bytes = std::uint64_t{256} << 20});
  // Either hwloc refuses the file, or what it read (a NUMA node numbered -2) is refused as a
  // report value; both name the file.
  EXPECT_TRUE(msg.empty() || msg.find("--hwloc-xml " + file.string() + ": hwloc") != std::string::npos ||
              msg.find("--hwloc-xml " + file.string() + " (as read by hwloc): topology.") != std::string::npos)
      << msg;
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  EXPECT_LT(usage.ru_maxrss, 400L * 1024) << "KiB resident in the test process";
}

TEST(HwlocXmlIsolation, ChildOverItsTimeIsAnInputErrorNamingTheFile) {
  auto file = topology_test::fixture_dir("") / "hgx-h100-nvswitch.hwloc.xml";
  std::string msg = load_error(file, {.timeout_s = 0.000001});
  EXPECT_NE(msg.find("--hwloc-xml " + file.string() + ": hwloc did not finish reading it within 1e-06 s"), std::string::npos)
      << msg;
}

TEST(HwlocXmlIsolation, CrashInTheChildIsAnInputErrorNamingTheFile) {
  ::setenv("INTERPROBE_TEST_CRASH_HWLOC_CHILD", "1", 1);
  auto file = topology_test::fixture_dir("") / "hgx-h100-nvswitch.hwloc.xml";
  std::string msg = load_error(file);
  ::unsetenv("INTERPROBE_TEST_CRASH_HWLOC_CHILD");
  EXPECT_NE(msg.find("--hwloc-xml " + file.string() + ": hwloc"), std::string::npos) << msg;
  EXPECT_NE(msg.find("export it again with `lstopo --of xml FILE`"), std::string::npos) << msg;
}

TEST(HwlocXmlIsolation, MalformedFileIsAnInputErrorFromTheChild) {
  TempTree dir;
  auto file = dir.path() / "cut.xml";
  std::string xml = slurp(topology_test::fixture_dir("") / "hgx-h100-nvswitch.hwloc.xml");
  std::ofstream(file) << xml.substr(0, xml.size() / 2);
  EXPECT_NE(load_error(file).find("--hwloc-xml " + file.string() + ": hwloc cannot load it"), std::string::npos);
}

TEST(HwlocXmlIsolation, DevicesAndOversizedFilesAreRefusedBeforeHwlocSeesThem) {
  EXPECT_NE(load_error("/dev/zero").find("--hwloc-xml /dev/zero: not a regular file or pipe"), std::string::npos);
  TempTree dir;
  auto big = dir.path() / "big.xml";
  std::ofstream(big) << "<?xml";
  fs::resize_file(big, kMaxHwlocXmlBytes + 1);
  EXPECT_NE(load_error(big).find("larger than 64 MiB"), std::string::npos) << load_error(big);
}

TEST(HwlocXmlIsolation, CanonicalExportKeepsWhatTheFixtureSays) {
  report::TopologySection s;
  NvmlTopology gpus;
  read_hwloc_xml((topology_test::fixture_dir("") / "hgx-h100-nvswitch.hwloc.xml").string(), s, gpus);
  EXPECT_FALSE(s.pci_devices.empty());
  EXPECT_EQ(gpus.gpus.size(), 8u);
  ASSERT_FALSE(gpus.gpus.empty());
  EXPECT_FALSE(gpus.gpus[0].nvlinks.empty());
  EXPECT_EQ(s.cpu.numa_nodes.size(), 2u);
  EXPECT_EQ(s.cpu.numa_nodes.at(0).distances, (std::vector<std::int64_t>{10, 21}));
}

#endif

}  // namespace interprobe
