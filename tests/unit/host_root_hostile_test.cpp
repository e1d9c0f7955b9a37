// host_root against hostile trees (issue 11): FIFOs and device nodes are refused without
// blocking, every read is capped, opens never follow a link out of the root, an unreadable
// manifest.json says why, and the tree audit names what a library must not be given.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>

#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/root_fd.hpp"
#include "common/tree_audit.hpp"
#include "support/temp_tree.hpp"

namespace fs = std::filesystem;
using interprobe::FileRead;
using interprobe::HostRoot;
using interprobe::InputError;
using interprobe::ReadFailure;
using interprobe::RootEscapeError;
using interprobe::testing::TempTree;

namespace {

constexpr auto kHangLimit = std::chrono::seconds(5);

// Runs `work` and fails (instead of hanging the suite) when it does not return in time; a
// reader stuck on `fifo` is released by opening and closing its writing end.
template <typename Work>
auto within_limit(Work work, const fs::path& fifo) {
  auto future = std::async(std::launch::async, work);
  if (future.wait_for(kHangLimit) != std::future_status::ready) {
    ADD_FAILURE() << "blocked on " << fifo;
    int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
  }
  return future.get();
}

void make_fifo(const TempTree& tree, const std::string& machine_path) {
  fs::create_directories(tree.at(machine_path).parent_path());
  ASSERT_EQ(::mkfifo(tree.at(machine_path).c_str(), 0644), 0);
}

void make_sparse(const fs::path& file, off_t bytes) {
  fs::create_directories(file.parent_path());
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, bytes), 0);
  ::close(fd);
}

TEST(HostileRoot, FifosAreNotFilesAndNeverBlock) {
  TempTree tree;
  for (const char* p : {"/sys/class/dmi/id/product_name", "/sys/devices/system/cpu/online", "/proc/self/cgroup",
                        "/cpuid.txt", "/nvml.json"})
    make_fifo(tree, p);
  HostRoot root(tree.path());
  for (const char* p : {"/sys/class/dmi/id/product_name", "/sys/devices/system/cpu/online", "/proc/self/cgroup",
                        "/cpuid.txt", "/nvml.json"}) {
    FileRead r = within_limit([&] { return root.read(p); }, tree.at(p));
    EXPECT_EQ(r.failure, ReadFailure::not_a_file) << p;
    EXPECT_FALSE(within_limit([&] { return root.read_text(p); }, tree.at(p)).has_value()) << p;
  }
}

TEST(HostileRoot, DeviceNodesAreNeverRead) {
  TempTree tree;
  fs::create_directories(tree.at("/proc"));
  // A link to the host's /dev/zero is re-rooted (and so missing here); a node inside the tree
  // is refused by type. mknod needs CAP_MKNOD: that part skips without it.
  tree.relink("proc/mounts", "/dev/zero");
  HostRoot root(tree.path());
  EXPECT_EQ(root.read("/proc/mounts").failure, ReadFailure::missing);
  if (::mknod(tree.at("/proc/cpuinfo").c_str(), S_IFCHR | 0644, makedev(1, 5)) != 0) GTEST_SKIP() << "mknod not permitted";
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(root.read("/proc/cpuinfo").failure, ReadFailure::not_a_file);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
}

TEST(HostileRoot, ReadsAreCapped) {
  TempTree tree;
  tree.write("sys/a/exact", std::string(10, 'x'));
  tree.write("sys/a/attr", std::string(HostRoot::kTextMaxBytes + 1, '1'));
  make_sparse(tree.at("/proc/cpuinfo"), off_t{20} << 30);  // 20 GiB, no blocks
  HostRoot root(tree.path());
  EXPECT_TRUE(root.read("/sys/a/exact", 10).ok());
  EXPECT_EQ(root.read("/sys/a/exact", 9).failure, ReadFailure::too_large);
  EXPECT_FALSE(root.read_text("/sys/a/attr").has_value());  // one attribute is at most 64 KiB
  EXPECT_TRUE(root.read("/sys/a/attr").ok());
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(root.read("/proc/cpuinfo").failure, ReadFailure::too_large);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));  // refused by size, unread
}

TEST(HostileRoot, LexicallyInsideLinksThatClimbOutAreEscapes) {
  TempTree tree;
  fs::create_directories(tree.at("/sys"));
  tree.relink("sys/x", ".");
  tree.relink("sys/up", "x/..");
  tree.relink("sys/up2", "up/..");
  HostRoot root(tree.path());
  EXPECT_THROW(root.read("/sys/up2/etc/passwd"), RootEscapeError);
  EXPECT_EQ(root.canonical("/sys/up"), "/");
}

TEST(HostileRoot, OpenBeneathNeverFollowsALink) {
  // What a tree changed between resolving and opening looks like: a directory became a link.
  TempTree tree, outside;
  outside.write("secret", "host\n");
  fs::create_directories(tree.at("/sys"));
  tree.relink("sys/class", outside.path().string());
  interprobe::UniqueFd top(::open(tree.path().c_str(), O_PATH | O_DIRECTORY));
  ASSERT_TRUE(top);
  interprobe::UniqueFd fd = interprobe::open_beneath(top.get(), {"sys", "class", "secret"}, O_RDONLY);
  EXPECT_FALSE(fd);
  EXPECT_TRUE(errno == ELOOP || errno == ENOTDIR || errno == EXDEV) << errno;
  interprobe::UniqueFd walked = interprobe::open_beneath_by_walk(top.get(), {"sys", "class", "secret"}, O_RDONLY);
  EXPECT_FALSE(walked);
  EXPECT_TRUE(interprobe::open_beneath_by_walk(top.get(), {"sys"}, O_RDONLY | O_DIRECTORY));
}

TEST(HostileRoot, UnreadableManifestSaysWhy) {
  {
    TempTree tree;
    make_fifo(tree, "/manifest.json");
    try {
      within_limit([&] { HostRoot root(tree.path()); return 0; }, tree.at("/manifest.json"));
      ADD_FAILURE() << "a FIFO manifest.json was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("JSON"), std::string::npos) << e.what();
    }
  }
  {
    TempTree tree;
    fs::create_directories(tree.at("/manifest.json"));
    EXPECT_THROW(HostRoot root(tree.path()), InputError);
  }
  {
    TempTree tree;
    make_sparse(tree.at("/manifest.json"), off_t{17} << 20);
    try {
      HostRoot root(tree.path());
      ADD_FAILURE() << "a 17 MiB manifest.json was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("too large"), std::string::npos) << e.what();
    }
  }
}

TEST(TreeAudit, NamesWhatALibraryMustNotBeGiven) {
  TempTree outside;
  auto audit = [](const TempTree& t) { return interprobe::library_unsafe_reason(HostRoot(t.path())); };
  {
    TempTree tree;
    tree.write("sys/devices/system/cpu/online", "0-3\n");
    tree.relink("sys/bus", "../sys/devices");  // relative, stays inside
    EXPECT_EQ(audit(tree), std::nullopt);
  }
  {
    TempTree tree;
    tree.write("sys/devices/system/cpu/online", "0-3\n");
    tree.relink("sys/devices/system/cpu/cpu0", outside.path().string());
    auto why = audit(tree);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("/sys/devices/system/cpu/cpu0 is an absolute symlink"), std::string::npos) << *why;
  }
  {
    TempTree tree;
    fs::create_directories(tree.at("/sys"));
    tree.relink("sys/x", ".");
    tree.relink("sys/up", "x/../..");
    auto why = audit(tree);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("climbs out"), std::string::npos) << *why;
  }
  {
    TempTree tree;
    make_fifo(tree, "/proc/self/cgroup");
    auto why = audit(tree);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("/proc/self/cgroup is a FIFO"), std::string::npos) << *why;
  }
  {
    TempTree tree;
    make_sparse(tree.at("/proc/cpuinfo"), off_t{1} << 30);
    auto why = audit(tree);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("/proc/cpuinfo is larger than"), std::string::npos) << *why;
  }
  {
    TempTree tree;
    fs::create_directories(tree.at("/proc"));
    if (::mknod(tree.at("/proc/mounts").c_str(), S_IFCHR | 0644, makedev(1, 5)) == 0) {
      auto why = audit(tree);
      ASSERT_TRUE(why);
      EXPECT_NE(why->find("/proc/mounts is a character device"), std::string::npos) << *why;
    }
  }
  {
    TempTree tree;
    fs::create_directories(tree.at("/sys/devices"));
    fs::permissions(tree.at("/sys/devices"), fs::perms(01777));  // anyone could swap entries meanwhile
    auto why = audit(tree);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("/sys/devices is writable by everyone"), std::string::npos) << *why;
  }
  {
    TempTree tree;
    fs::create_directories(tree.at("/sys/devices"));
    if (::chown(tree.at("/sys/devices").c_str(), 12345, 12345) == 0) {  // needs CAP_CHOWN
      auto why = audit(tree);
      ASSERT_TRUE(why);
      EXPECT_NE(why->find("/sys/devices belongs to uid 12345"), std::string::npos) << *why;
    }
  }
  EXPECT_EQ(interprobe::library_unsafe_reason(HostRoot()), std::nullopt);
}

}  // namespace
