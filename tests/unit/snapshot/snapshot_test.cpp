// Snapshots: capture follows links like the probes do; archives are validated before
// anything is extracted; identifiers are redacted with stable hashes.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/cpuid.hpp"
#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "probes/snapshot/archive.hpp"
#include "probes/snapshot/capture.hpp"
#include "support/run_binary.hpp"
#include "support/temp_tree.hpp"
#include "tar_builder.hpp"

using namespace interprobe;
namespace fs = std::filesystem;

namespace {

using Entry = interprobe::testing::TarEntry;
using interprobe::testing::make_tar_gz;

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

TEST_F(SnapshotTest, UnreadableFilesAreListedAndTheSnapshotCompletes) {
  make_machine(dir_ / "machine");
  // Larger than a sysfs attribute can be: skipped with the reason, not copied.
  fs::path huge = dir_ / "machine/sys/class/dmi/id/product_name";
  { std::ofstream(huge) << "x"; }
  fs::resize_file(huge, 17u << 20);
  HostRoot machine(dir_ / "machine");
  snapshot::Capture capture(machine, dir_ / "snap");
  capture.fixed_detection_set();
  capture.finish();
  const auto& unreadable = capture.manifest().unreadable;
  auto listed = std::find_if(unreadable.begin(), unreadable.end(),
                             [](const auto& u) { return u.path == "/sys/class/dmi/id/product_name"; });
  ASSERT_NE(listed, unreadable.end());
  EXPECT_NE(listed->reason.find("16 MiB"), std::string::npos) << listed->reason;
  EXPECT_EQ(listed->failure, ReadFailure::too_large);
  EXPECT_FALSE(fs::exists(dir_ / "snap/sys/class/dmi/id/product_name"));
  EXPECT_EQ(slurp(dir_ / "snap/sys/class/dmi/id/sys_vendor"), "QEMU\n");  // the rest is there
  auto manifest = nlohmann::json::parse(slurp(dir_ / "snap/manifest.json"));
  bool in_manifest = false;
  for (const auto& u : manifest["unreadable"])
    in_manifest |= u["path"] == "/sys/class/dmi/id/product_name" && u["reason"].get<std::string>().find("16 MiB") != std::string::npos;
  EXPECT_TRUE(in_manifest) << manifest.dump();
  // Replayed, the file fails as it did on the machine: it existed, it was too large.
  HostRoot replay(dir_ / "snap");
  EXPECT_EQ(replay.read("/sys/class/dmi/id/product_name").failure, ReadFailure::too_large);
  EXPECT_TRUE(replay.exists("/sys/class/dmi/id/product_name"));
  EXPECT_EQ(replay.read("/sys/class/dmi/id/board_name").failure, ReadFailure::missing);
}

// Root-only files a non-root snapshot could not read replay as "permission denied", so the
// virtualization probe says "unknown: needs root" on replay just as it did live.
TEST_F(SnapshotTest, ManifestPermissionDeniedReplaysAsPermissionDenied) {
  fs::create_directories(dir_ / "snap/proc/1");
  std::ofstream(dir_ / "snap/manifest.json")
      << R"({"unreadable": [{"path": "/proc/1/environ", "reason": "permission denied", "failure": "permission_denied"},
                            {"path": "/cpuid.txt", "reason": "no CPUID here"},
                            {"path": "/sys/x", "reason": "?", "failure": "no_such_failure"}]})";
  HostRoot replay(dir_ / "snap");
  EXPECT_EQ(replay.read("/proc/1/environ").failure, ReadFailure::permission_denied);
  EXPECT_EQ(replay.read("/proc/1/../1/environ").failure, ReadFailure::permission_denied);
  EXPECT_EQ(replay.read("/cpuid.txt").failure, ReadFailure::missing);
  EXPECT_EQ(replay.read("/sys/x").failure, ReadFailure::missing);
  // A snapshot of this snapshot keeps the failure.
  {
    std::ofstream(dir_ / "snap/proc/1/cgroup") << "0::/\n";
    snapshot::Capture again(replay, dir_ / "snap2");
    again.fixed_detection_set();
    again.finish();
    EXPECT_EQ(HostRoot(dir_ / "snap2").read("/proc/1/environ").failure, ReadFailure::permission_denied);
    EXPECT_EQ(HostRoot(dir_ / "snap2").read_text("/proc/1/cgroup"), "0::/");
  }
  std::ofstream(dir_ / "snap/manifest.json", std::ios::trunc) << R"({"unreadable": [)";
  try {
    HostRoot broken(dir_ / "snap");
    FAIL() << "a truncated manifest.json must be an input error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("manifest.json"), std::string::npos) << e.what();
  }
}

namespace {

nlohmann::json run_json(const std::vector<std::string>& args) {
  auto p = interprobe::testing::run_interprobe(args);
  EXPECT_EQ(p.exit_code, 0) << p.err;
  return p.exit_code == 0 ? nlohmann::json::parse(p.out) : nlohmann::json::object();
}

// Replaying a snapshot must tell what the live run told. Only the inventory probes run: the
// timed ones have nothing to replay and would make this test slow (minutes under ASan).
void expect_replay_equals_live(const fs::path& snap) {
  std::vector<std::string> inventory = {"run", "--only", "system,topology,virtualization", "--json", "-q"};
  auto live = run_json(inventory);
  auto replay_args = inventory;
  replay_args.insert(replay_args.end(), {"--root", snap.string()});
  auto replay = run_json(replay_args);
  for (const char* section : {"topology", "virtualization", "system"}) {
    ASSERT_TRUE(live.contains(section)) << section;
    EXPECT_EQ(live[section], replay[section]) << section << " differs after replaying " << snap
                                               << "\nlive:   " << live[section].dump() << "\nreplay: " << replay[section].dump();
  }
  EXPECT_TRUE(live["host"]["live"].get<bool>());
  EXPECT_FALSE(replay["host"]["live"].get<bool>());
}

}  // namespace

TEST_F(SnapshotTest, CliSnapshotOfThisMachineReplaysTheSameSections) {
  // Unredacted directory: every field must match.
  auto dir_snap = dir_ / "plain";
  auto take = interprobe::testing::run_interprobe({"snapshot", "--no-redact", "-o", dir_snap.string(), "-q"});
  ASSERT_EQ(take.exit_code, 0) << take.err;
  expect_replay_equals_live(dir_snap);
  auto manifest = nlohmann::json::parse(slurp(dir_snap / "manifest.json"));
  EXPECT_FALSE(manifest["redacted"].get<bool>());
  // This machine's topology and virtualization sections hold no serials, UUIDs or host names
  // (no GPU here), so a redacted archive must replay to the same sections too.
  auto archive = dir_ / "live.tar.gz";
  take = interprobe::testing::run_interprobe({"snapshot", "-o", archive.string(), "-q"});
  ASSERT_EQ(take.exit_code, 0) << take.err;
  expect_replay_equals_live(archive);
  // A second snapshot into a non-empty directory would mix two machines: refused.
  EXPECT_EQ(interprobe::testing::run_interprobe({"snapshot", "-o", dir_snap.string(), "-q"}).exit_code, 2);
}

// The fixtures of the topology and virtualization tests, snapshotted with --root and replayed,
// give what the fixture itself gives: a snapshot is a fixture (and the recorded nvml.json of
// the GPU fixtures travels with it).
class SnapshotOfFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(SnapshotOfFixture, ReplaysLikeTheFixture) {
  fs::path fixture = fs::path(INTERPROBE_FIXTURES) / GetParam();
  interprobe::testing::TempTree scratch;
  fs::path snap = scratch.path() / "snap";
  auto take = interprobe::testing::run_interprobe({"snapshot", "--no-redact", "--root", fixture.string(), "-o", snap.string(), "-q"});
  ASSERT_EQ(take.exit_code, 0) << take.err;
  auto inventory_of = [](const fs::path& root) {
    return interprobe::testing::run_interprobe({"run", "--only", "topology,virtualization", "--json", "-q", "--root", root.string()});
  };
  auto original = inventory_of(fixture);
  auto replay = inventory_of(snap);
  ASSERT_EQ(original.exit_code, replay.exit_code) << original.err << replay.err;
  auto a = nlohmann::json::parse(original.out), b = nlohmann::json::parse(replay.out);
  for (const char* section : {"topology", "virtualization"})
    EXPECT_EQ(a[section], b[section]) << GetParam() << ": " << section << "\nfixture: " << a[section].dump()
                                      << "\nreplay:  " << b[section].dump();
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, SnapshotOfFixture,
    ::testing::Values("topology/baremetal-2s-8gpu-pcie", "topology/hgx-h100-nvswitch", "topology/proxmox-q35-8gpu-rootports",
                      "topology/i440fx-guest", "topology/kernel-5.4-old-link-strings", "topology/q35-rootbus-gpus",
                      "topology/live-firecracker-capture", "virt/bare-metal-hgx", "virt/proxmox-kvm-q35", "virt/hyperv-azure",
                      "virt/xen-dom0", "virt/xen-pv", "virt/aws-nitro", "virt/gce", "virt/vmware", "virt/wsl2", "virt/lxc",
                      "virt/docker-in-kvm", "virt/podman", "virt/firecracker-docker-bhyve", "virt/cloud-hypervisor",
                      "virt/qemu-tcg-i440fx", "virt/aws-metal", "virt/xen-hvm", "virt/firecracker"),
    [](const ::testing::TestParamInfo<const char*>& param) {
      std::string name = param.param;
      for (auto& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });
