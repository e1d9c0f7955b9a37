// What `snapshot` writes: only the copy (never a host file through a link the machine's tree
// holds), only at -o (never through a planted temporary name, never over a device or an
// existing archive unless --force), and nothing at all when interrupted.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "probes/snapshot/archive.hpp"
#include "probes/snapshot/capture.hpp"
#include "probes/snapshot/output_tree.hpp"
#include "support/run_binary.hpp"
#include "support/temp_tree.hpp"

using namespace interprobe;
using interprobe::testing::run_interprobe;
using interprobe::testing::TempTree;
namespace fs = std::filesystem;

namespace {

const std::string kMinimal = std::string(INTERPROBE_FIXTURES) + "/minimal-kvm-guest";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A machine tree whose DMI directory and /proc/1 are absolute links, as on an attacker's tree:
// read inside the root they lead to the tree's own files; followed on this host they lead to
// `host` (standing in for the host's /sys/devices/virtual/dmi/id and /proc/1).
struct HostileLinks {
  TempTree host, root;
  fs::path host_serial, host_environ, tree_dmi, tree_proc1;
  HostileLinks() {
    host_serial = host.path() / "dmi/product_serial";
    host_environ = host.path() / "proc1/environ";
    host.write(host_serial, "HOST-SERIAL\n");
    host.write(host_environ, std::string("HOST_SECRET=1\0container=host\0", 30));
    // The tree holds the same absolute paths under its root.
    tree_dmi = root.path() / (host.path() / "dmi").relative_path();
    tree_proc1 = root.path() / (host.path() / "proc1").relative_path();
    root.write(tree_dmi / "product_serial", "TREE-SERIAL\n");
    root.write(tree_dmi / "sys_vendor", "QEMU\n");
    root.write(tree_proc1 / "environ", std::string("TREE_SECRET=2\0container=lxc\0", 29));
    fs::create_directories(root.path() / "sys/class/dmi");
    fs::create_symlink(host.path() / "dmi", root.path() / "sys/class/dmi/id");
    fs::create_directories(root.path() / "proc");
    fs::create_symlink(host.path() / "proc1", root.path() / "proc/1");
  }
  void expect_host_untouched() const {
    EXPECT_EQ(slurp(host_serial), "HOST-SERIAL\n");
    EXPECT_EQ(slurp(host_environ), std::string("HOST_SECRET=1\0container=host\0", 30));
  }
  // Where the tree's own files land in a snapshot at `snap`.
  fs::path copied(const fs::path& snap, const fs::path& in_tree) const { return snap / in_tree.lexically_relative(root.path()); }
};

// Runs the binary with a SIGINT already pending, as a Ctrl-C that came before its first check:
// blocked and raised here, the signal survives exec and reaches the tool's handler the moment it
// is installed, so the run sees it at its first check whatever the machine's load (sending it
// once the handler showed in SigCgt raced the run: a loaded CI machine let `topo` finish first).
int run_interrupted(const std::vector<std::string>& args) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int null_fd = ::open("/dev/null", O_RDWR);
    ::dup2(null_fd, 0), ::dup2(null_fd, 1), ::dup2(null_fd, 2);
    sigset_t sigint;
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    ::sigprocmask(SIG_BLOCK, &sigint, nullptr);
    ::raise(SIGINT);
    std::vector<char*> argv{const_cast<char*>(INTERPROBE_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(INTERPROBE_BINARY, argv.data());
    std::_Exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST(SnapshotOutput, RedactionActsOnTheCopyNeverThroughTheTreesLinks) {
  HostileLinks m;
  TempTree out;
  HostRoot machine(m.root.path());
  snapshot::Capture capture(machine, out.path() / "snap");
  capture.fixed_detection_set();
  snapshot::redact_tree(out.path() / "snap", capture.manifest());
  m.expect_host_untouched();
  EXPECT_EQ(slurp(m.copied(out.path() / "snap", m.tree_dmi / "product_serial")), snapshot::stable_hash("TREE-SERIAL") + "\n");
  EXPECT_EQ(slurp(m.copied(out.path() / "snap", m.tree_proc1 / "environ")), std::string("container=lxc\0", 14));
  const auto& redacted = capture.manifest().redacted_paths;
  EXPECT_NE(std::find(redacted.begin(), redacted.end(), "/sys/class/dmi/id/product_serial"), redacted.end());
}

TEST(SnapshotOutput, CliSnapshotOfAHostileTreeWritesOnlyTheCopy) {
  HostileLinks m;
  TempTree out;
  auto p = run_interprobe({"snapshot", "--root", m.root.path().string(), "-o", (out.path() / "snap").string(), "-q"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  m.expect_host_untouched();
  auto copy = slurp(m.copied(out.path() / "snap", m.tree_dmi / "product_serial"));
  EXPECT_EQ(copy, snapshot::stable_hash("TREE-SERIAL") + "\n");
  // Nothing but the snapshot directory was created beside it (the staging directory is gone).
  EXPECT_EQ(std::distance(fs::directory_iterator(out.path()), fs::directory_iterator()), 1);
}

TEST(SnapshotOutput, OutputTreeNeverWritesThroughALink) {
  TempTree host, out;
  host.write(host.path() / "victim", "host file\n");
  snapshot::OutputTree tree(out.path() / "tree");
  fs::create_symlink(host.path(), out.path() / "tree/dir-link");
  fs::create_symlink(host.path() / "victim", out.path() / "tree/file-link");
  EXPECT_THROW(tree.write_file("dir-link/victim", "pwned"), InputError);
  EXPECT_THROW(tree.write_file("dir-link/new", "pwned"), InputError);
  EXPECT_THROW(tree.make_directories("dir-link/sub"), InputError);
  EXPECT_THROW(tree.make_symlink("dir-link/l", "/"), InputError);
  EXPECT_THROW(tree.write_file("../escape", "pwned"), InputError);
  tree.write_file("file-link", "ours\n");  // the link is replaced, not followed
  EXPECT_EQ(slurp(host.path() / "victim"), "host file\n");
  EXPECT_FALSE(fs::exists(host.path() / "new"));
  EXPECT_FALSE(fs::is_symlink(out.path() / "tree/file-link"));
  EXPECT_EQ(tree.resolve("dir-link/victim"), std::nullopt);  // the tree has no such directory
  EXPECT_EQ(tree.resolve("/file-link"), "file-link");
}

// The archive used to go to FILE.tmp.<pid>, opened without O_EXCL: a link planted there was
// followed and the file it pointed at was overwritten.
TEST(SnapshotOutput, APlantedTemporaryNameIsNeverFollowed) {
  TempTree dir;
  dir.write(dir.path() / "snap/sys/vendor", "0x10de\n");
  dir.write(dir.path() / "victim", "victim\n");
  fs::path archive = dir.path() / "out.tar.gz";
  fs::create_symlink(dir.path() / "victim", dir.path() / ("out.tar.gz.tmp." + std::to_string(::getpid())));
  snapshot::write_archive(dir.path() / "snap", archive);
  EXPECT_EQ(slurp(dir.path() / "victim"), "victim\n");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(archive)));
  fs::create_directories(dir.path() / "back");
  snapshot::extract_archive(archive, dir.path() / "back");
  EXPECT_EQ(slurp(dir.path() / "back/sys/vendor"), "0x10de\n");
}

TEST(SnapshotOutput, ExistingArchivesNeedForceAndOddTargetsAreRefused) {
  TempTree dir;
  fs::path archive = dir.path() / "x.tar.gz";
  dir.write(archive, "earlier\n");
  auto p = run_interprobe({"snapshot", "--root", kMinimal, "-o", archive.string(), "-q"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("-o " + archive.string()), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("--force"), std::string::npos) << p.err;
  EXPECT_EQ(slurp(archive), "earlier\n");
  p = run_interprobe({"snapshot", "--root", kMinimal, "-o", archive.string(), "-q", "--force"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(slurp(archive), "earlier\n");

  fs::path fifo = dir.path() / "fifo.tar.gz";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  fs::path null_link = dir.path() / "null.tar.gz";
  fs::create_symlink("/dev/null", null_link);
  for (const auto& target : {fifo, null_link}) {
    for (bool force : {false, true}) {
      std::vector<std::string> args = {"snapshot", "--root", kMinimal, "-o", target.string(), "-q"};
      if (force) args.push_back("--force");
      p = run_interprobe(args);
      EXPECT_EQ(p.exit_code, 2) << target;
      EXPECT_NE(p.err.find("-o " + target.string()), std::string::npos) << p.err;
    }
  }
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(fs::read_symlink(null_link), "/dev/null");
  p = run_interprobe({"snapshot", "--root", kMinimal, "-o", "", "-q"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("-o"), std::string::npos) << p.err;
}

TEST(SnapshotOutput, SigintStopsASnapshotAndLeavesNothing) {
  TempTree dir;
  for (const char* name : {"snap.tar.gz", "snap-dir"}) {
    fs::path dest = dir.path() / name;
    EXPECT_EQ(run_interrupted({"snapshot", "--root", kMinimal, "-o", dest.string(), "-q"}), 130) << name;
    EXPECT_FALSE(fs::exists(fs::symlink_status(dest))) << name;
  }
  EXPECT_TRUE(fs::is_empty(dir.path())) << "a temporary file or directory was left behind";
}

TEST(SnapshotOutput, ADirectoryGivenWithATrailingSlashIsThatDirectory) {
  TempTree dir;
  auto p = run_interprobe({"snapshot", "--root", kMinimal, "-o", (dir.path() / "snap").string() + "/", "-q"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_TRUE(fs::exists(dir.path() / "snap/manifest.json"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

// Reading or extracting a --root archive stops on Ctrl-C like probing does (it used to end in
// "internal error", exit 3, once the archive reader checked the flag).
TEST(SnapshotOutput, SigintWhileAnArchiveIsOpenedEndsWith130) {
  TempTree dir;
  fs::path archive = dir.path() / "snap.tar.gz";
  ASSERT_EQ(run_interprobe({"snapshot", "--root", kMinimal, "-o", archive.string(), "-q"}).exit_code, 0);
  fs::path report = dir.path() / "r.json";
  EXPECT_EQ(run_interrupted({"topo", "--root", archive.string(), "-o", report.string()}), 130);
  EXPECT_FALSE(fs::exists(report));
}
