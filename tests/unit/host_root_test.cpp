// host_root: chroot-style resolution, escapes, loops, missing files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/errors.hpp"
#include "common/host_root.hpp"

namespace fs = std::filesystem;
using interprobe::HostRoot;
using interprobe::InputError;
using interprobe::ReadFailure;
using interprobe::RootEscapeError;

namespace {

class TempTree : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/interprobe-root-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    fs::create_directories(dir_ / "sys/devices/pci0000:00/0000:00:01.0");
    fs::create_directories(dir_ / "sys/bus/pci/devices");
    write("sys/devices/pci0000:00/0000:00:01.0/vendor", "0x10de\n");
    fs::create_symlink("../../../devices/pci0000:00/0000:00:01.0", dir_ / "sys/bus/pci/devices/0000:00:01.0");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& content) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << content;
  }
  fs::path dir_;
};

TEST_F(TempTree, ReadsThroughRelativeSymlinks) {
  HostRoot root(dir_);
  EXPECT_FALSE(root.is_live());
  EXPECT_EQ(root.read_text("/sys/bus/pci/devices/0000:00:01.0/vendor"), "0x10de");
  EXPECT_EQ(root.canonical("/sys/bus/pci/devices/0000:00:01.0"), "/sys/devices/pci0000:00/0000:00:01.0");
  EXPECT_EQ(root.link_target("/sys/bus/pci/devices/0000:00:01.0"), "../../../devices/pci0000:00/0000:00:01.0");
}

TEST_F(TempTree, AbsoluteLinksResolveInsideTheRoot) {
  // /etc/passwd exists on the host; inside the root it must resolve to <root>/etc/passwd.
  fs::create_symlink("/etc/passwd", dir_ / "sys/abs-link");
  HostRoot root(dir_);
  auto r = root.read("/sys/abs-link");
  EXPECT_EQ(r.failure, ReadFailure::missing);
  write("etc/passwd", "fixture-only\n");
  EXPECT_EQ(root.read_text("/sys/abs-link"), "fixture-only");
}

TEST_F(TempTree, DotDotAboveRootIsAnEscape) {
  fs::create_symlink("../../../../../../etc/passwd", dir_ / "sys/escape");
  HostRoot root(dir_);
  EXPECT_THROW(root.read("/sys/escape"), RootEscapeError);
  EXPECT_THROW(root.read("/../etc/passwd"), RootEscapeError);
  try {
    root.read("/sys/escape");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/sys/escape"), std::string::npos) << e.what();
  }
}

TEST_F(TempTree, DotDotInsideRootIsFine) {
  HostRoot root(dir_);
  EXPECT_EQ(root.read_text("/sys/bus/../devices/pci0000:00/0000:00:01.0/vendor"), "0x10de");
}

TEST_F(TempTree, SymlinkLoopIsAFailureNotACrash) {
  fs::create_symlink("loop-b", dir_ / "sys/loop-a");
  fs::create_symlink("loop-a", dir_ / "sys/loop-b");
  HostRoot root(dir_);
  EXPECT_EQ(root.read("/sys/loop-a").failure, ReadFailure::symlink_loop);
  EXPECT_FALSE(root.canonical("/sys/loop-a").has_value());
  EXPECT_FALSE(root.exists("/sys/loop-a/x"));
}

TEST_F(TempTree, MissingFilesAndDirectories) {
  HostRoot root(dir_);
  EXPECT_EQ(root.read("/sys/nothing").failure, ReadFailure::missing);
  EXPECT_FALSE(root.read_text("/proc/cpuinfo").has_value());
  EXPECT_TRUE(root.list("/proc").empty());
  EXPECT_EQ(root.read("/sys/devices").failure, ReadFailure::not_a_file);
  auto names = root.list("/sys/bus/pci/devices");
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0], "0000:00:01.0");
}

TEST_F(TempTree, OversizedFileIsRefused) {
  write("sys/big", std::string(2000, 'x'));
  HostRoot root(dir_);
  EXPECT_EQ(root.read("/sys/big", 1000).failure, ReadFailure::too_large);
  EXPECT_TRUE(root.read("/sys/big", 4000).ok());
}

TEST_F(TempTree, UnreadableFileIsPermissionDenied) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads mode-000 files";
  write("sys/secret", "x");
  fs::permissions(dir_ / "sys/secret", fs::perms::none);
  HostRoot root(dir_);
  EXPECT_EQ(root.read("/sys/secret").failure, ReadFailure::permission_denied);
}

TEST(HostRootOpen, MissingRootIsAnInputErrorNamingThePath) {
  try {
    HostRoot root(fs::path("/nonexistent/interprobe-root"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/interprobe-root"), std::string::npos);
  }
}

TEST(HostRootOpen, FileAsRootIsAnInputError) { EXPECT_THROW(HostRoot(fs::path("/etc/hostname")), InputError); }

TEST(HostRootOpen, SlashIsLive) {
  HostRoot root(fs::path("/"));
  EXPECT_TRUE(root.is_live());
  EXPECT_TRUE(HostRoot().is_live());
}

}  // namespace
