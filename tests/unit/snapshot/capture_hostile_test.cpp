// Capturing a hostile tree (issue 11): FIFOs and device nodes are listed as "not a regular
// file" instead of blocking the capture or being read forever, and nothing outside the source
// root is copied, however its links point.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>

#include "common/host_root.hpp"
#include "probes/snapshot/capture.hpp"
#include "support/temp_tree.hpp"

using namespace interprobe;
namespace fs = std::filesystem;
using interprobe::testing::TempTree;

namespace {

std::optional<ReadFailure> listed(const snapshot::Manifest& m, const std::string& path) {
  for (const auto& u : m.unreadable)
    if (u.path == path) return u.failure;
  return std::nullopt;
}

TEST(CaptureHostile, SpecialFilesAreListedNotReadAndLinksStayInside) {
  TempTree machine, out, outside;
  outside.write("product_uuid", "host-secret\n");
  machine.write("sys/class/dmi/id/sys_vendor", "QEMU\n");
  ASSERT_EQ(::mkfifo(machine.at("/sys/class/dmi/id/product_name").c_str(), 0644), 0);
  machine.relink("sys/class/dmi/id/product_uuid", (outside.path() / "product_uuid").string());
  fs::create_directories(machine.at("/proc"));
  bool have_device = ::mknod(machine.at("/proc/cpuinfo").c_str(), S_IFCHR | 0644, makedev(1, 5)) == 0;
  HostRoot root(machine.path());
  snapshot::Capture capture(root, out.path() / "snap");
  auto done = std::async(std::launch::async, [&] { capture.fixed_detection_set(); });
  ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "capture blocked";
  done.get();
  EXPECT_EQ(listed(capture.manifest(), "/sys/class/dmi/id/product_name"), ReadFailure::not_a_file);
  if (have_device) {
    EXPECT_EQ(listed(capture.manifest(), "/proc/cpuinfo"), ReadFailure::not_a_file);
  }
  EXPECT_FALSE(fs::exists(out.path() / "snap/proc/cpuinfo"));
  EXPECT_TRUE(fs::exists(out.path() / "snap/sys/class/dmi/id/sys_vendor"));
  // The absolute link is recreated as a link; what it names on the host is not copied.
  EXPECT_TRUE(fs::is_symlink(out.path() / "snap/sys/class/dmi/id/product_uuid"));
  for (const auto& entry : fs::recursive_directory_iterator(out.path() / "snap")) {
    if (!fs::is_regular_file(entry.symlink_status())) continue;  // the recreated link itself points out
    std::ifstream in(entry.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find("host-secret"), std::string::npos) << entry.path();
  }
}

}  // namespace
