// Snapshot archives as an attacker would write them: links that leave the tree only through
// other links, an archive swapped while it is read, trees too deep or too large. Nothing may be
// written outside the destination, and refusals are quick and name the limit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/errors.hpp"
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

// The archive is opened once and read into memory: replacing it while it is worked on (by
// rename, as an attacker with write access to its directory would) cannot make the extraction
// differ from what was validated. A second thread keeps swapping a benign and a hostile archive;
// each extraction sees one or the other whole, never the benign one validated and the hostile
// one extracted.
TEST(ArchiveSafety, AnArchiveSwappedWhileItIsReadIsNotReadAgain) {
  TempTree dir;
  const fs::path archive = dir.path() / "snap.tar.gz";
  const fs::path escape = dir.path() / "escaped";
  auto benign = make_tar_gz(dir.path() / "benign.tar.gz", {{"sys/vendor", TarEntry::file, "0x10de\n"}});
  auto evil = make_tar_gz(dir.path() / "evil.tar.gz", {{escape.string(), TarEntry::file, "pwned"}});
  fs::copy_file(benign, archive);
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    const fs::path next = dir.path() / "next.tar.gz";
    for (int i = 0; !stop; ++i) {
      ::link((i % 2 ? evil : benign).c_str(), next.c_str());
      ::rename(next.c_str(), archive.c_str());
    }
  });
  int extracted = 0, refused = 0;
  for (int attempt = 0; attempt < 200 && !fs::exists(escape); ++attempt) {
    fs::path dest = dir.path() / "dest";
    fs::remove_all(dest);
    fs::create_directories(dest);
    try {
      snapshot::extract_archive(archive, dest);
      ++extracted;
    } catch (const InputError&) {
      ++refused;
    }
  }
  stop = true;
  swapper.join();
  EXPECT_FALSE(fs::exists(escape)) << "an entry was written outside the destination";
  EXPECT_GT(extracted, 0);
  EXPECT_GT(refused, 0);
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
  EXPECT_LT(message.size(), 600u) << "the 8,000-byte path is quoted whole";

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

// The fuzzer's find (CI, 2026-12-04): a sparse map placing one byte 1 TiB past a 100-byte file.
// Reading it back wrote zeros until the 13 s timeout; it is refused before anything is written.
TEST(ArchiveSafety, SparseEntriesAreRefusedBeforeTheirHolesAreWritten) {
  TempTree dir;
  const fs::path sparse = fs::path(INTERPROBE_SOURCE_DIR) / "tests/fuzz/archive/regressions/sparse-hole-past-size.tar";
  ASSERT_TRUE(fs::exists(sparse)) << sparse;
  auto start = std::chrono::steady_clock::now();
  auto message = refusal(sparse, dir.path() / "dest-sparse");
  EXPECT_LT(seconds_since(start), 5.0);
  EXPECT_NE(message.find("refused entry 'sys/big': sparse file"), std::string::npos) << message;
}

TEST(ArchiveSafety, CliRefusesLinksLeavingThroughLinksWithExit2) {
  TempTree dir;
  auto archive = make_tar_gz(dir.path() / "evil.tar.gz", {{"x", TarEntry::link, "."}, {"sys", TarEntry::link, "x/.."}});
  auto p = interprobe::testing::run_interprobe({"topo", "--root", archive.string(), "-q"});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("evil.tar.gz"), std::string::npos) << p.err;
  EXPECT_TRUE(p.out.empty());
}
