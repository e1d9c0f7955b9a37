#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/cpuid.hpp"
#include "common/errors.hpp"
#include "common/host_root.hpp"

using namespace interprobe;
namespace fs = std::filesystem;

TEST(CpuidText, ParsesLeavesWithComments) {
  auto c = parse_cpuid_text(
      "# KVM guest\n"
      "0x00000001 0x0 0x000806f8 0x00000800 0xfffa3203 0x178bfbff  # hypervisor bit set\n"
      "\n"
      "0x40000000 0x00 0x40000001 0x4b4d564b 0x564b4d56 0x0000004d\n",
      "cpuid.txt");
  ASSERT_TRUE(c.available());
  auto leaf1 = c.query(1, 0);
  ASSERT_TRUE(leaf1);
  EXPECT_TRUE(leaf1->ecx & (1u << 31));
  auto hv = c.query(0x40000000, 0);
  ASSERT_TRUE(hv);
  EXPECT_EQ(hv->ebx, 0x4b4d564bu);  // "KVMK"
  EXPECT_FALSE(c.query(0x40000100, 0));
}

TEST(CpuidText, MalformedLineNamesFileAndLine) {
  try {
    parse_cpuid_text("0x1 0x0 0x1 0x2 0x3 0x4\n0x40000000 0x0 nothex 0x0 0x0 0x0\n", "/fx/cpuid.txt");
    FAIL();
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("/fx/cpuid.txt:2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("nothex"), std::string::npos) << msg;
  }
  EXPECT_THROW(parse_cpuid_text("0x1 0x0 0x1 0x2 0x3\n", "c"), InputError);            // 5 fields
  EXPECT_THROW(parse_cpuid_text("1 0 1 2 3 4\n", "c"), InputError);                    // no 0x
  EXPECT_THROW(parse_cpuid_text("0x1 0x0 0x100000000 0x0 0x0 0x0\n", "c"), InputError);  // > 32 bit
}

TEST(CpuidText, FormatRoundTrips) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidRegs> leaves{{{0x40000000, 0}, {1, 2, 3, 4}},
                                                                      {{7, 1}, {5, 6, 7, 8}}};
  auto parsed = parse_cpuid_text(format_cpuid_text(leaves), "x");
  EXPECT_EQ(parsed.query(0x40000000, 0), (CpuidRegs{1, 2, 3, 4}));
  EXPECT_EQ(parsed.query(7, 1), (CpuidRegs{5, 6, 7, 8}));
}

TEST(CpuidSource, MissingFileUnderRootMeansUnknown) {
  char tmpl[] = "/tmp/interprobe-cpuid-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  HostRoot root(dir);
  auto src = make_cpuid_source(root);
  EXPECT_FALSE(src->available());
  EXPECT_FALSE(src->query(1, 0));
  EXPECT_NE(src->origin().find("unknown"), std::string::npos);
  std::ofstream(dir / "cpuid.txt") << "0x1 0x0 0x0 0x0 0x80000000 0x0\n";
  auto recorded = make_cpuid_source(root);
  EXPECT_TRUE(recorded->available());
  EXPECT_EQ(recorded->query(1, 0)->ecx, 0x80000000u);
  std::ofstream(dir / "cpuid.txt") << "garbage\n";
  EXPECT_THROW(make_cpuid_source(root), InputError);
  fs::remove_all(dir);
}

#if defined(__x86_64__)
TEST(CpuidSource, LiveUsesTheInstruction) {
  auto src = make_cpuid_source(HostRoot());
  ASSERT_TRUE(src->available());
  EXPECT_EQ(src->origin(), "instruction");
  auto leaf0 = src->query(0, 0);
  ASSERT_TRUE(leaf0);
  EXPECT_GT(leaf0->eax, 0u);  // highest basic leaf
}
#endif
