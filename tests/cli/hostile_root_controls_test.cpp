// Positive controls for the hostile-root test: each detector sees what it is there to see, the
// planted links really lead into the canary, the archive really holds the plants, and a limit
// really ends a hung or runaway child. Without these, a green HostileRoot/* proves nothing.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <thread>

#include "support/canary_watch.hpp"
#include "support/hostile_tree.hpp"
#include "support/run_binary.hpp"
#include "support/terminal_text.hpp"

namespace interprobe::testing {
namespace {

namespace fs = std::filesystem;

bool contains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

using Reader = std::unique_ptr<archive, decltype(&archive_read_free)>;

// Null-valued (error kept) when the file is no readable archive.
Reader open_archive(const fs::path& file) {
  Reader a(archive_read_new(), archive_read_free);
  archive_read_support_filter_all(a.get());
  archive_read_support_format_all(a.get());
  if (archive_read_open_filename(a.get(), file.c_str(), 1 << 16) != ARCHIVE_OK) return Reader(nullptr, archive_read_free);
  return a;
}

TEST(HostileRootControls, WatcherSeesAReadByAnotherProcess) {
  HostileSandbox box(HostileFamily::clean);
  CanaryWatch watch(box.canary());
  Process p = run_program("/bin/cat", {(box.canary() / "dmi/product_name").string()}, {}, RunLimits{});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto events = watch.events();
  EXPECT_TRUE(contains(events, "open dmi/product_name")) << ::testing::PrintToString(events);
  EXPECT_TRUE(contains(events, "access dmi/product_name")) << ::testing::PrintToString(events);
  struct statvfs vfs {};
  if (::statvfs(box.canary().c_str(), &vfs) == 0 && !(vfs.f_flag & ST_NOATIME)) {
    EXPECT_TRUE(contains(watch.atime_changes(), "atime dmi/product_name"));
  }
  EXPECT_TRUE(watch.events().empty()) << "events are reported once";
}

TEST(HostileRootControls, WatcherSeesAnOpenWithoutARead) {
  HostileSandbox box(HostileFamily::clean);
  CanaryWatch watch(box.canary());
  int fd = ::open((box.canary() / "cpuinfo").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ::close(fd);
  EXPECT_TRUE(contains(watch.events(), "open cpuinfo"));
}

TEST(HostileRootControls, EveryPlantedLinkLeadsIntoTheCanary) {
  for (auto family : {HostileFamily::absolute_links, HostileFamily::dotdot_links, HostileFamily::lexical_links,
                      HostileFamily::all_in_one}) {
    HostileSandbox box(family);
    ASSERT_FALSE(box.escaping_links().empty()) << family_name(family);
    CanaryWatch watch(box.canary());
    for (const auto& link : box.escaping_links()) {
      // Followed the way the host follows links (what a careless reader does).
      int fd = ::open(link.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      EXPECT_GE(fd, 0) << family_name(family) << ": " << link << " does not lead anywhere";
      if (fd >= 0) ::close(fd);
      EXPECT_TRUE(contains(watch.events(), "open ")) << family_name(family) << ": " << link << " -> "
                                                     << fs::read_symlink(link) << " does not open a canary file";
    }
  }
}

TEST(HostileRootControls, ListingSeesWritesAndNewLinks) {
  HostileSandbox box(HostileFamily::clean);
  Listing before = list_tree(box.outer(), {"box/out"});
  std::ofstream(box.canary() / "victim-output", std::ios::app) << "x";
  ::link((box.canary() / "cpuinfo").c_str(), (box.tmp() / "hard").c_str());
  std::ofstream(box.out() / "ignored") << "x";
  auto changes = diff_listings(before, list_tree(box.outer(), {"box/out"}));
  EXPECT_TRUE(contains(changes, "changed box/canary/victim-output")) << ::testing::PrintToString(changes);
  EXPECT_TRUE(contains(changes, "changed box/canary/cpuinfo")) << "link count and ctime";
  EXPECT_TRUE(contains(changes, "new box/tmp/hard"));
  EXPECT_FALSE(contains(changes, "box/out/")) << "the output directory is not compared";
}

TEST(HostileRootControls, TerminalCheckFlagsEscC1AndRawBytes) {
  EXPECT_EQ(terminal_hazards("plain text\twith ├─ tree and µs\n").size(), 0u);
  auto hazards = terminal_hazards("a\x1b]0;pwned\x07 b\xc2\x9b" "31m c\x9b" "32m");
  EXPECT_EQ(hazards.size(), 4u) << ::testing::PrintToString(hazards);
  EXPECT_TRUE(contains(hazards, "ESC"));
  EXPECT_TRUE(contains(hazards, "C1 control U+009B"));
  EXPECT_TRUE(contains(hazards, "raw C1 byte 0x9B"));
  EXPECT_EQ(printable("a\x1b" "b"), "a\\x1Bb");
}

TEST(HostileRootControls, TimeLimitKillsTheWholeProcessGroup) {
  int leader = 0;
  RunLimits limits;
  limits.time = std::chrono::seconds(1);
  limits.before_exec = [&](int pid) { leader = pid; };
  Process p = run_program("/bin/sh", {"-c", "sleep 60 & sleep 60"}, {}, limits);
  EXPECT_TRUE(p.timed_out);
  EXPECT_LT(p.seconds, 5.0);
  bool group_gone = false;  // the background sleep is reparented, then reaped by init
  for (int i = 0; i < 200 && !group_gone; ++i) {
    group_gone = ::kill(-leader, 0) != 0;
    if (!group_gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(group_gone) << "a child of the timed-out run survived";
}

TEST(HostileRootControls, MemoryLimitKillsARunaway) {
  RunLimits limits;
  limits.time = std::chrono::seconds(30);
  limits.rss_bytes = 64ull << 20;
  Process p = run_program("/usr/bin/tail", {"/dev/zero"}, {}, limits);  // buffers one endless line
  EXPECT_TRUE(p.memory_exceeded);
  EXPECT_FALSE(p.timed_out);
}

TEST(HostileRootControls, ArchiveHoldsThePlants) {
  HostileSandbox box(HostileFamily::all_in_one);
  box.build_archive();
  EXPECT_LT(fs::file_size(box.archive()), 64u << 20) << "sparse files must stay sparse in the archive";
  auto a = open_archive(box.archive());
  ASSERT_TRUE(a) << box.archive() << " is not readable";
  std::set<std::string> seen;
  archive_entry* e = nullptr;
  while (archive_read_next_header(a.get(), &e) == ARCHIVE_OK) {
    auto type = archive_entry_filetype(e);
    if (type == AE_IFIFO) seen.insert("fifo");
    if (type == AE_IFCHR) seen.insert("chr");
    if (type == AE_IFLNK && archive_entry_symlink(e)[0] == '/') seen.insert("absolute link");
    if (type == AE_IFLNK && std::string(archive_entry_symlink(e)).rfind("../../", 0) == 0) seen.insert("dotdot link");
    if (std::string(archive_entry_pathname(e)) == "up12") seen.insert("lexical chain");
    if (archive_entry_size(e) >= (128ll << 20) && archive_entry_sparse_count(e) > 0) seen.insert("huge");
  }
  for (const char* want : {"fifo", "absolute link", "dotdot link", "lexical chain", "huge"})
    EXPECT_TRUE(seen.count(want)) << want;
  if (::geteuid() == 0) {
    EXPECT_TRUE(seen.count("chr"));
  }
}

TEST(HostileRootControls, ArchiveEscapeEntriesAreWritten) {
  const std::pair<HostileFamily, std::string> expected[] = {
      {HostileFamily::archive_absolute_paths, "/escape-absolute"},
      {HostileFamily::archive_dotdot_paths, "../../"},
      {HostileFamily::archive_link_writes, "sys/class/dmi/idx/product_name"},
      {HostileFamily::archive_lexical_writes, "up12/"},
      {HostileFamily::archive_hard_links, "proc/victim-hard"}};
  for (const auto& [family, name] : expected) {
    HostileSandbox box(family);
    box.build_archive();
    auto a = open_archive(box.archive());
    ASSERT_TRUE(a) << box.archive() << " is not readable";
    std::vector<std::string> names;
    archive_entry* e = nullptr;
    while (archive_read_next_header(a.get(), &e) == ARCHIVE_OK) names.push_back(archive_entry_pathname(e));
    EXPECT_TRUE(contains(names, name)) << family_name(family) << ": no entry like " << name;
  }
}

}  // namespace
}  // namespace interprobe::testing
