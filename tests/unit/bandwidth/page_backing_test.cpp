// Page backing from smaps text, the THP mode line and the --pages words.
#include <gtest/gtest.h>

#include "common/errors.hpp"
#include "probes/bandwidth/page_backing.hpp"
#include "model/page_backing.hpp"

using namespace interprobe;

namespace {

constexpr const char* kSmaps =
    "55d0c0000000-55d0c0021000 r--p 00000000 08:01 123  /usr/bin/interprobe\n"
    "Size:                132 kB\n"
    "AnonHugePages:         0 kB\n"
    "7f0000000000-7f0000200000 ---p 00000000 00:00 0\n"
    "Size:               2048 kB\n"
    "AnonHugePages:         0 kB\n"
    "7f0000200000-7f0040200000 rw-p 00000000 00:00 0\n"
    "Size:            1048576 kB\n"
    "Rss:             1048576 kB\n"
    "AnonHugePages:    651264 kB\n"
    "THPeligible:    1\n"
    "7f0040200000-7f0080200000 rw-p 00000000 00:00 0\n"
    "Size:            1048576 kB\n"
    "AnonHugePages:      4096 kB\n"
    "VmFlags: rd wr mr mw me ac sd nh\n";

}  // namespace

TEST(PageBacking, SumsAnonHugePagesOfTheEntriesOverlappingTheRange) {
  EXPECT_EQ(anon_huge_bytes(kSmaps, 0x7f0000200000, 0x7f0040200000), 651264ull * 1024);
  EXPECT_EQ(anon_huge_bytes(kSmaps, 0x7f0040200000, 0x7f0040201000), 4096ull * 1024);
  // A range across both mappings counts both.
  EXPECT_EQ(anon_huge_bytes(kSmaps, 0x7f0000300000, 0x7f0040300000), (651264ull + 4096) * 1024);
  // No entry there: unknown, not zero.
  EXPECT_FALSE(anon_huge_bytes(kSmaps, 0x1000, 0x2000));
  EXPECT_FALSE(anon_huge_bytes("", 0x1000, 0x2000));
  EXPECT_FALSE(anon_huge_bytes("not smaps at all\nAnonHugePages: 5 kB\n", 0, ~std::uintptr_t{0}));
  // A malformed value is not counted.
  EXPECT_EQ(anon_huge_bytes("1000-2000 rw-p 0 0:0 0\nAnonHugePages: lots kB\n", 0x1000, 0x2000), 0u);
}

TEST(PageBacking, ThpModeIsTheBracketedWord) {
  EXPECT_EQ(thp_mode_from("always [madvise] never"), interprobe::report::ThpMode::madvise);
  EXPECT_EQ(thp_mode_from("[always] madvise never\n"), interprobe::report::ThpMode::always);
  EXPECT_EQ(thp_mode_from("always madvise [never]"), interprobe::report::ThpMode::never);
  EXPECT_FALSE(thp_mode_from("always [sometimes] never"));  // a mode this interprobe does not know
  EXPECT_FALSE(thp_mode_from("always madvise never"));
  EXPECT_FALSE(thp_mode_from("[]"));
}

TEST(PageBacking, PagesOptionWords) {
  EXPECT_EQ(parse_page_policy("auto"), PagePolicy::automatic);
  EXPECT_EQ(parse_page_policy("4k"), PagePolicy::small);
  EXPECT_EQ(parse_page_policy("2M"), PagePolicy::huge);
  EXPECT_STREQ(to_string(PagePolicy::small), "4k");
  try {
    parse_page_policy("1g");
    FAIL() << "1g accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--pages"), std::string::npos) << e.what();
  }
}

TEST(PageBacking, MixedBackingIsNamedOnlyWhenBuffersDiffer) {
  report::BandwidthSweep s;
  using interprobe::report::HostBufferRole;
  s.buffers = {{HostBufferRole::src, 1 << 30, std::int64_t{1} << 30},
               {HostBufferRole::dst, 1 << 30, std::int64_t{1} << 30},
               {HostBufferRole::bounce, 512 << 10, 0}};
  EXPECT_FALSE(report::mixed_page_backing(s)) << "all huge; the small bounce buffer cannot hold a huge page";
  s.buffers[1].huge_page_bytes = 0;
  auto mixed = report::mixed_page_backing(s);
  ASSERT_TRUE(mixed);
  EXPECT_EQ(*mixed, "src 100%, dst 0% in 2 MiB pages");
  s.buffers[0].huge_page_bytes = 0;
  EXPECT_FALSE(report::mixed_page_backing(s)) << "none huge is uniform too";
  s.buffers[0].huge_page_bytes = (1 << 30) / 2;
  s.buffers[1].huge_page_bytes = (1 << 30) / 2;
  EXPECT_TRUE(report::mixed_page_backing(s)) << "half of each: ranges differ";
  s.buffers[0].huge_page_bytes = s.buffers[1].huge_page_bytes = std::nullopt;
  EXPECT_FALSE(report::mixed_page_backing(s)) << "unknown is not mixed";
}
