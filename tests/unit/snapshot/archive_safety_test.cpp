// Snapshot archives as an attacker would write them: links that leave the tree only through
// other links, an archive swapped while it is read, trees too deep or too large. Nothing may be
// written outside the destination, and refusals are quick and name the limit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "probes/common/errors.hpp"
#include "probes/snapshot/archive.hpp"
#include "support/run_binary.hpp"
#include "support/temp_tree.hpp"
#include "tar_builder.hpp"

using namespace interprobe;
using interprobe::testing::make_tar_gz;
using interprobe::testing::TarEntry;
using interprobe::testing::TempTree;
namespace fs = std::filesystem;

namespace {

// The message of the InputError extract_archive throws ("" when it does not throw).
std::string refusal(const fs::path& archive, const fs::path& dest, const snapshot::ArchiveLimits& limits = {}) {
  fs::create_directories(dest);
  try {
    snapshot::extract_archive(archive, dest, limits);
  } catch (const InputError& e) {
    EXPECT_TRUE(fs::is_empty(dest)) << archive << ": something was written before the refusal";
    return e.what();
  }
  return "";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// Each link's own target stays inside when read alone; followed through the others, it leaves.
TEST(ArchiveSafety, LinksThatLeaveOnlyThroughOtherLinksAreRefused) {
  TempTree dir;
  const std::vector<std::vector<TarEntry>> hostile = {
      {{"x", TarEntry::link, "."}, {"up", TarEntry::link, "x/.."}},
      {{"x", TarEntry::link, "."}, {"up", TarEntry::link, "x/.."}, {"up2", TarEntry::link, "up/.."},
       {"sys/devices/system/cpu", TarEntry::dir, ""},
       {"sys/devices/system/cpu/cpu0", TarEntry::link, "../../../../up2/sys/devices/system/cpu/cpu0"}},
      {{"sys/a/b", TarEntry::dir, ""}, {"sys/a/b/deep", TarEntry::link, "../../.."}, {"sys/out", TarEntry::link, "a/b/deep/.."}},
      {{"sys/l1", TarEntry::link, "l2"}, {"sys/l2", TarEntry::link, "l1"}},                 // a loop
      {{"sys/d", TarEntry::dir, ""}, {"sys/l", TarEntry::link, "d"}, {"sys/l/f", TarEntry::file, "x"}},  // below a link
      {{"sys/f", TarEntry::file, "x"}, {"sys/f", TarEntry::link, "other"}},                   // twice
      {{"sys/p", TarEntry::fifo, ""}},
  };
  for (std::size_t i = 0; i < hostile.size(); ++i) {
    auto archive = make_tar_gz(dir.path() / ("hostile" + std::to_string(i) + ".tar.gz"), hostile[i]);
    EXPECT_NE(refusal(archive, dir.path() / ("dest" + std::to_string(i))), "") << "case " << i;
  }
  auto message = refusal(dir.path() / "hostile0.tar.gz", dir.path() / "dest-again");
  EXPECT_NE(message.find("'up' -> 'x/..'"), std::string::npos) << message;
  EXPECT_NE(message.find("outside"), std::string::npos) << message;
}

TEST(ArchiveSafety, LinksThatStayInsideOrLeadNowhereAreKept) {
  TempTree dir;
  auto archive = make_tar_gz(dir.path() / "fine.tar.gz",
                             {{"sys/devices/pci0000:00/0000:00:02.0/vendor", TarEntry::file, "0x10de\n"},
                              {"sys/bus/pci/devices/0000:00:02.0", TarEntry::link, "../../../devices/pci0000:00/0000:00:02.0"},
                              {"sys/self", TarEntry::link, "."},
                              {"sys/via-self", TarEntry::link, "self/self/bus/pci/devices/0000:00:02.0/vendor"},
                              {"sys/dangling", TarEntry::link, "missing/../../../../.."}});
  fs::path dest = dir.path() / "dest";
  ASSERT_EQ(refusal(archive, dest), "");
  std::ifstream in(dest / "sys/via-self");
  std::string vendor;
  in >> vendor;
  EXPECT_EQ(vendor, "0x10de");
}

// The archive is opened once and read into memory: replacing it after the work started (a
// rename, as an attacker with write access to its directory would) changes nothing.
TEST(ArchiveSafety, AnArchiveSwappedWhileItIsReadIsNotReadAgain) {
  TempTree dir;
  // Incompressible content makes reading the archive take long enough to swap it meanwhile.
  std::mt19937_64 random(42);
  std::string noise(24u << 20, '\0');
  for (auto& c : noise) c = static_cast<char>(random());
  auto benign = make_tar_gz(dir.path() / "benign.tar.gz", {{"sys/noise", TarEntry::file, noise}});
  const fs::path archive = dir.path() / "snap.tar.gz";
  const fs::path escape = dir.path() / "escaped";
  auto evil = make_tar_gz(dir.path() / "evil.tar.gz", {{escape.string(), TarEntry::file, "pwned"}});
  fs::copy_file(benign, archive);
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(refusal(archive, dir.path() / "timing"), "");
  double whole_s = seconds_since(start);
  for (int attempt = 0; attempt < 3; ++attempt) {
    fs::path dest = dir.path() / ("dest" + std::to_string(attempt));
    fs::create_directories(dest);
    fs::copy_file(benign, archive, fs::copy_options::overwrite_existing);
    fs::copy_file(evil, dir.path() / "evil-copy.tar.gz", fs::copy_options::overwrite_existing);
    std::thread swapper([&] {
      // Inside the validation pass, before the second open the extraction used to make.
      std::this_thread::sleep_for(std::chrono::duration<double>(whole_s * (0.1 + 0.1 * attempt)));
      fs::rename(dir.path() / "evil-copy.tar.gz", archive);
    });
    try {
      snapshot::extract_archive(archive, dest);
    } catch (const InputError&) {
      // The swap landed before the one read: refused, as it should be.
    }
    swapper.join();
    EXPECT_FALSE(fs::exists(escape)) << "attempt " << attempt << ": an entry was written outside the destination";
  }
}

// 8 entries 4,000 directories deep took 90 s to extract; now refused at once, naming the limit.
TEST(ArchiveSafety, DeepLongAndLargeArchivesAreRefusedQuicklyNamingTheLimit) {
  TempTree dir;
  std::string deep;
  for (int i = 0; i < 4000; ++i) deep += "d/";
  std::vector<TarEntry> entries;
  for (int i = 0; i < 8; ++i) entries.push_back({deep + "f" + std::to_string(i), TarEntry::file, "x"});
  auto start = std::chrono::steady_clock::now();
  auto message = refusal(make_tar_gz(dir.path() / "deep.tar.gz", entries), dir.path() / "dest-deep");
  EXPECT_LT(seconds_since(start), 5.0);
  EXPECT_NE(message.find("(the limit)"), std::string::npos) << message;

  std::string depth_only;
  for (int i = 0; i < 100; ++i) depth_only += "d/";
  message = refusal(make_tar_gz(dir.path() / "depth.tar.gz", {{depth_only + "f", TarEntry::file, "x"}}), dir.path() / "dest-depth");
  EXPECT_NE(message.find("more than 64 directories deep"), std::string::npos) << message;

  std::string long_path = std::string(200, 'a') + "/" + std::string(200, 'b') + "/" + std::string(200, 'c') + "/" +
                          std::string(200, 'd') + "/" + std::string(200, 'e') + "/" + std::string(200, 'f');
  message = refusal(make_tar_gz(dir.path() / "long.tar.gz", {{long_path, TarEntry::file, "x"}}), dir.path() / "dest-long");
  EXPECT_NE(message.find("longer than 1024 bytes"), std::string::npos) << message;

  auto big = make_tar_gz(dir.path() / "big.tar.gz", {{"sys/big", TarEntry::file, std::string(4096, 'x')}});
  snapshot::ArchiveLimits limits;
  limits.max_total_bytes = 1000;
  message = refusal(big, dir.path() / "dest-big", limits);
  EXPECT_NE(message.find("more than 1000 bytes uncompressed"), std::string::npos) << message;
  limits = {};
  limits.max_archive_bytes = 10;
  message = refusal(big, dir.path() / "dest-file", limits);
  EXPECT_NE(message.find("larger than 10 bytes"), std::string::npos) << message;
}

TEST(ArchiveSafety, CliRefusesLinksLeavingThroughLinksWithExit2) {
  TempTree dir;
  auto archive = make_tar_gz(dir.path() / "evil.tar.gz", {{"x", TarEntry::link, "."}, {"sys", TarEntry::link, "x/../.."}});
  auto p = interprobe::testing::run_interprobe({"topo", "--root", archive.string(), "-q"});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("evil.tar.gz"), std::string::npos) << p.err;
  EXPECT_TRUE(p.out.empty());
}
