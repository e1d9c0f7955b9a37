// What -o writes, and when: an earlier report survives a failed run (an error exit, a full
// disk), partial saves go beside the named file, odd targets are refused before probing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/json.hpp"
#include "support/run_binary.hpp"
#include "support/temp_tree.hpp"

using interprobe::testing::run_interprobe;
using interprobe::testing::TempTree;
namespace fs = std::filesystem;

namespace {

const std::string kMinimal = std::string(INTERPROBE_FIXTURES) + "/minimal-kvm-guest";
const std::string kMalformedCpuid = std::string(INTERPROBE_FIXTURES) + "/virt/malformed";
const std::string kOld = "an earlier report\n";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Files our writer left behind (".interprobe-XXXXXX" temporaries).
int leftover_temps(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().rfind(".interprobe-", 0) == 0;
  return n;
}

}  // namespace

TEST(OutputSafety, AnEarlierReportSurvivesARunThatExitsTwoOrFour) {
  TempTree dir;
  auto file = dir.path() / "r.json";
  dir.write(file, kOld);
  // Exit 2: the tree's cpuid.txt is malformed (the report is still produced).
  auto p = run_interprobe({"virt", "--root", kMalformedCpuid, "-q", "-o", file.string()});
  ASSERT_EQ(p.exit_code, 2) << p.err;
  EXPECT_EQ(slurp(file), kOld);
  auto partial = dir.path() / "r.json.partial";
  EXPECT_NE(p.err.find(partial.string()), std::string::npos) << p.err;
  EXPECT_EQ(interprobe::report::read_report_file(partial).probes.size(), 1u);
  // Exit 4: the one probe asked for cannot run on a replayed tree.
  p = run_interprobe({"bw", "--root", kMinimal, "-q", "-o", file.string()});
  ASSERT_EQ(p.exit_code, 4) << p.err;
  EXPECT_EQ(slurp(file), kOld);
  // A completed run replaces it and clears the partial save.
  p = run_interprobe({"virt", "--root", kMinimal, "-q", "-o", file.string()});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(interprobe::report::read_report_file(file).probes.front().name, "virtualization");
  EXPECT_FALSE(fs::exists(partial));
  EXPECT_EQ(leftover_temps(dir.path()), 0);
}

// A full disk, simulated with RLIMIT_FSIZE (works unprivileged and as root): the run fails with
// exit 2 naming the file, and the earlier report is still there, whole.
TEST(OutputSafety, AFullDiskLeavesTheEarlierReportWhole) {
  TempTree dir;
  auto file = dir.path() / "r.json";
  dir.write(file, kOld);
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct rlimit small = saved;
  small.rlim_cur = 2048;  // a report of the minimal fixture is about 4 KiB
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);  // inherited: writes fail with EFBIG instead
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  auto p = run_interprobe({"run", "--root", kMinimal, "-q", "--json", "-o", file.string()});
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("-o " + file.string()), std::string::npos) << p.err;
  EXPECT_EQ(slurp(file), kOld);
  EXPECT_EQ(leftover_temps(dir.path()), 0);
}

TEST(OutputSafety, ALongestPossibleFileNameWorks) {
  TempTree dir;
  auto file = dir.path() / (std::string(250, 'r') + ".json");  // 255 characters, NAME_MAX
  auto p = run_interprobe({"virt", "--root", kMinimal, "-q", "-o", file.string()});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(interprobe::report::read_report_file(file).probes.front().name, "virtualization");
  // Its partial save, cut short to fit, works too.
  p = run_interprobe({"virt", "--root", kMalformedCpuid, "-q", "-o", file.string()});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_TRUE(fs::exists(dir.path() / (std::string(247, 'r') + ".partial"))) << p.err;
}

TEST(OutputSafety, BadTargetsAreRefusedBeforeProbing) {
  TempTree dir;
  auto p = run_interprobe({"run", "--root", kMinimal, "-o", ""});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("-o"), std::string::npos) << p.err;
  EXPECT_TRUE(p.out.empty()) << "probed before refusing: " << p.out.substr(0, 200);

  auto fifo = dir.path() / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto link = dir.path() / "null.json";
  fs::create_symlink("/dev/null", link);
  for (const auto& target : {fifo, link, dir.path()}) {
    p = run_interprobe({"run", "--root", kMinimal, "-o", target.string()});
    EXPECT_EQ(p.exit_code, 2) << target;
    EXPECT_NE(p.err.find("-o " + target.string()), std::string::npos) << p.err;
    EXPECT_TRUE(p.out.empty()) << target;
  }
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_TRUE(fs::is_symlink(link));
  if (::geteuid() == 0) {  // a device node can be made only as root
    auto device = dir.path() / "null-device.json";
    ASSERT_EQ(::mknod(device.c_str(), S_IFCHR | 0666, ::makedev(1, 3)), 0);
    EXPECT_EQ(run_interprobe({"run", "--root", kMinimal, "-o", device.string()}).exit_code, 2);
    ASSERT_EQ(::lstat(device.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
  }
}
