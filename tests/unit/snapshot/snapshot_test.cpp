// Snapshots: capture follows links like the probes do; archives are validated before
// anything is extracted; identifiers are redacted with stable hashes.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "probes/common/cpuid.hpp"
#include "probes/common/errors.hpp"
#include "probes/common/host_root.hpp"
#include "probes/snapshot/archive.hpp"
#include "probes/snapshot/capture.hpp"
#include "support/run_binary.hpp"

using namespace interprobe;
namespace fs = std::filesystem;

namespace {

struct Entry {
  std::string path;
  enum { file, dir, link, hardlink } type = file;
  std::string content_or_target;
};

fs::path make_tar_gz(const fs::path& file, const std::vector<Entry>& entries) {
  archive* a = archive_write_new();
  archive_write_add_filter_gzip(a);
  archive_write_set_format_pax_restricted(a);
  archive_write_open_filename(a, file.c_str());
  for (const auto& e : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.path.c_str());
    if (e.type == Entry::file) {
      archive_entry_set_filetype(entry, AE_IFREG);
      archive_entry_set_perm(entry, 0644);
      archive_entry_set_size(entry, static_cast<la_int64_t>(e.content_or_target.size()));
    } else if (e.type == Entry::dir) {
      archive_entry_set_filetype(entry, AE_IFDIR);
      archive_entry_set_perm(entry, 0755);
    } else if (e.type == Entry::link) {
      archive_entry_set_filetype(entry, AE_IFLNK);
      archive_entry_set_symlink(entry, e.content_or_target.c_str());
    } else {
      archive_entry_set_filetype(entry, AE_IFREG);
      archive_entry_set_hardlink(entry, e.content_or_target.c_str());
    }
    archive_write_header(a, entry);
    if (e.type == Entry::file) archive_write_data(a, e.content_or_target.data(), e.content_or_target.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
  return file;
}

class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/interprobe-snaptest-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir_;
};

// The same shapes as sysfs: a bus link into /sys/devices, a driver link, a DMI serial.
void make_machine(const fs::path& root) {
  fs::create_directories(root / "sys/devices/pci0000:00/0000:00:02.0");
  fs::create_directories(root / "sys/bus/pci/devices");
  fs::create_directories(root / "sys/bus/pci/drivers/nvidia");
  fs::create_directories(root / "sys/class/dmi/id");
  std::ofstream(root / "sys/devices/pci0000:00/0000:00:02.0/vendor") << "0x10de\n";
  std::ofstream(root / "sys/devices/pci0000:00/0000:00:02.0/class") << "0x030200\n";
  fs::create_symlink("../../../bus/pci/drivers/nvidia", root / "sys/devices/pci0000:00/0000:00:02.0/driver");
  fs::create_symlink("../../../devices/pci0000:00/0000:00:02.0", root / "sys/bus/pci/devices/0000:00:02.0");
  std::ofstream(root / "sys/class/dmi/id/product_serial") << "SN-12345\n";
  std::ofstream(root / "sys/class/dmi/id/sys_vendor") << "QEMU\n";
  std::ofstream(root / "sys/class/dmi/id/chassis_asset_tag") << "7783-7084-3265-9085-8269-3286-77\n";
}

}  // namespace

TEST_F(SnapshotTest, CapturesWhatWasReadWithItsLinksAndReplaysIt) {
  make_machine(dir_ / "machine");
  HostRoot machine(dir_ / "machine");
  AccessLog log;
  machine.set_access_log(&log);
  EXPECT_EQ(machine.read_text("/sys/bus/pci/devices/0000:00:02.0/vendor"), "0x10de");
  EXPECT_EQ(machine.link_target("/sys/bus/pci/devices/0000:00:02.0/driver"), "../../../bus/pci/drivers/nvidia");
  machine.set_access_log(nullptr);

  snapshot::Capture capture(machine, dir_ / "snap");
  capture.everything_in(log);
  capture.finish();
  HostRoot replay(dir_ / "snap");
  EXPECT_EQ(replay.read_text("/sys/bus/pci/devices/0000:00:02.0/vendor"), "0x10de");
  EXPECT_EQ(replay.canonical("/sys/bus/pci/devices/0000:00:02.0"), "/sys/devices/pci0000:00/0000:00:02.0");
  EXPECT_EQ(replay.link_target("/sys/bus/pci/devices/0000:00:02.0/driver"), "../../../bus/pci/drivers/nvidia");
  // Not read, so not captured.
  EXPECT_FALSE(replay.exists("/sys/devices/pci0000:00/0000:00:02.0/class"));
  EXPECT_TRUE(fs::exists(dir_ / "snap/manifest.json"));
}

TEST_F(SnapshotTest, FixedSetCoversPciAttributesAndDmi) {
  make_machine(dir_ / "machine");
  HostRoot machine(dir_ / "machine");
  snapshot::Capture capture(machine, dir_ / "snap");
  capture.fixed_detection_set();
  capture.cpuid(RecordedCpuid::unknown("unknown: no cpuid.txt in the root"));
  capture.finish();
  HostRoot replay(dir_ / "snap");
  EXPECT_EQ(replay.read_text("/sys/bus/pci/devices/0000:00:02.0/class"), "0x030200");
  EXPECT_EQ(replay.read_text("/sys/class/dmi/id/sys_vendor"), "QEMU");
  EXPECT_NE(slurp(dir_ / "snap/manifest.json").find("cpuid.txt"), std::string::npos);  // unknown, and why
}

TEST_F(SnapshotTest, RedactionHashesIdentifiersStablyAndKeepsSignatures) {
  make_machine(dir_ / "machine");
  HostRoot machine(dir_ / "machine");
  snapshot::Capture capture(machine, dir_ / "snap");
  capture.fixed_detection_set();
  snapshot::redact_tree(dir_ / "snap", capture.manifest());
  std::string serial = slurp(dir_ / "snap/sys/class/dmi/id/product_serial");
  EXPECT_EQ(serial, snapshot::stable_hash("SN-12345") + "\n");
  EXPECT_EQ(serial.find("SN-12345"), std::string::npos);
  EXPECT_NE(snapshot::stable_hash("SN-12345"), snapshot::stable_hash("SN-12346"));
  EXPECT_EQ(slurp(dir_ / "snap/sys/class/dmi/id/chassis_asset_tag"), "7783-7084-3265-9085-8269-3286-77\n");
  ASSERT_EQ(capture.manifest().redacted_paths.size(), 1u);
}

TEST_F(SnapshotTest, ArchiveRoundTripKeepsLinks) {
  make_machine(dir_ / "machine");
  HostRoot machine(dir_ / "machine");
  snapshot::Capture capture(machine, dir_ / "snap");
  capture.fixed_detection_set();
  capture.finish();
  snapshot::write_archive(dir_ / "snap", dir_ / "snap.tar.gz");
  fs::create_directories(dir_ / "out");
  snapshot::extract_archive(dir_ / "snap.tar.gz", dir_ / "out");
  HostRoot replay(dir_ / "out");
  EXPECT_EQ(replay.read_text("/sys/bus/pci/devices/0000:00:02.0/vendor"), "0x10de");
}

TEST_F(SnapshotTest, HostileArchivesAreRefusedBeforeAnythingIsWritten) {
  struct Case {
    const char* name;
    std::vector<Entry> entries;
  };
  std::vector<Case> cases = {
      {"traversal", {{"sys/ok", Entry::file, "x"}, {"../../escaped-file", Entry::file, "pwned"}}},
      {"absolute", {{"/tmp/interprobe-absolute-escape", Entry::file, "pwned"}}},
      {"absolute-link", {{"sys/link", Entry::link, "/etc"}, {"sys/link/passwd-copy", Entry::file, "x"}}},
      {"relative-link-out", {{"sys/up", Entry::link, "../../.."}}},
      {"hardlink", {{"sys/h", Entry::hardlink, "/etc/passwd"}}},
  };
  for (const auto& c : cases) {
    auto file = make_tar_gz(dir_ / (std::string(c.name) + ".tar.gz"), c.entries);
    fs::path dest = dir_ / (std::string("dest-") + c.name);
    fs::create_directories(dest);
    EXPECT_THROW(snapshot::extract_archive(file, dest), InputError) << c.name;
    EXPECT_TRUE(fs::is_empty(dest)) << c.name << ": something was written";
  }
  EXPECT_FALSE(fs::exists(dir_.parent_path() / "escaped-file"));
  EXPECT_FALSE(fs::exists("/tmp/interprobe-absolute-escape"));
}

TEST_F(SnapshotTest, HugeEntryCountIsRefused) {
  std::vector<Entry> many;
  for (int i = 0; i < 50; ++i) many.push_back({"f" + std::to_string(i), Entry::file, ""});
  auto file = make_tar_gz(dir_ / "many.tar.gz", many);
  fs::create_directories(dir_ / "dest");
  snapshot::ArchiveLimits limits;
  limits.max_entries = 40;
  try {
    snapshot::extract_archive(file, dir_ / "dest", limits);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 40 entries"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir_ / "dest"));
  limits.max_entries = 60;
  EXPECT_NO_THROW(snapshot::extract_archive(file, dir_ / "dest", limits));
}

TEST_F(SnapshotTest, CliRefusesHostileArchiveWithExit2) {
  auto file = make_tar_gz(dir_ / "evil.tar.gz", {{"../../evil", Entry::file, "x"}});
  auto p = interprobe::testing::run_interprobe({"run", "--root", file.string()});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("evil.tar.gz"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find(".."), std::string::npos) << p.err;
  EXPECT_TRUE(p.out.empty());
}

TEST_F(SnapshotTest, CliSnapshotOfThisMachineReplaysTheSameSystemSection) {
  auto snap = dir_ / "live.tar.gz";
  auto take = interprobe::testing::run_interprobe({"snapshot", "-o", snap.string()});
  ASSERT_EQ(take.exit_code, 0) << take.err;
  auto live = interprobe::testing::run_interprobe({"run", "--json", "-q"});
  auto replay = interprobe::testing::run_interprobe({"run", "--root", snap.string(), "--json", "-q"});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  auto section = [](const std::string& json, const std::string& key) {
    auto start = json.find("\"" + key + "\": {");
    return start == std::string::npos ? std::string() : json.substr(start, json.find('}', start) - start);
  };
  EXPECT_FALSE(section(live.out, "system").empty());
  EXPECT_EQ(section(live.out, "system"), section(replay.out, "system"));
  auto again = interprobe::testing::run_interprobe({"snapshot", "-o", (dir_ / "notempty").string()});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(interprobe::testing::run_interprobe({"snapshot", "-o", (dir_ / "notempty").string()}).exit_code, 2);
}
