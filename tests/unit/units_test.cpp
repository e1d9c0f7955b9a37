#include <gtest/gtest.h>

#include <utility>

#include "common/errors.hpp"
#include "common/text.hpp"
#include "common/units.hpp"

using namespace interprobe;

TEST(Units, ParsesBinarySuffixes) {
  EXPECT_EQ(parse_size_bytes("4", "--min"), 4u);
  EXPECT_EQ(parse_size_bytes("64K", "--min"), 65536u);
  EXPECT_EQ(parse_size_bytes("1M", "--min"), 1048576u);
  EXPECT_EQ(parse_size_bytes("1g", "--max"), 1073741824u);
  EXPECT_EQ(parse_size_bytes("2KiB", "--max"), 2048u);
  EXPECT_EQ(parse_size_bytes("3KB", "--max"), 3072u);
}

TEST(Units, RejectsBadSizesNamingTheOption) {
  for (const char* bad : {"", "K", "12Q", "-4", "1.5M", "99999999999999999999"}) {
    try {
      parse_size_bytes(bad, "--max");
      FAIL() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--max"), std::string::npos);
    }
  }
  EXPECT_THROW(parse_size_bytes("17179869184T", "--max"), InputError);  // overflows 64 bits
}

TEST(Units, Formats) {
  EXPECT_EQ(format_bytes(256u << 20), "256 MiB");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(7), "7 B");
  EXPECT_EQ(format_size_label(8), "8");
  EXPECT_EQ(format_size_label(65536), "64K");
  EXPECT_EQ(format_size_label(1u << 30), "1G");
  EXPECT_EQ(format_size_label(1536), "1536");
}

// One generation function for probes and rules: each rate names its generation, and so do the
// slightly-off rates emulated ports and rounding produce; just below a floor is the generation before.
TEST(Units, PcieGenerationAtItsBoundaries) {
  const std::pair<double, int> named[] = {{2.5, 1},  {5.0, 2},   {8.0, 3},  {16.0, 4},  {32.0, 5}, {64.0, 6},
                                          {128.0, 7}, {31.5, 5}, {31.49, 4}, {15.5, 4}, {15.49, 3}, {4.49, 1},
                                          {2.0, 1}};
  for (const auto& [gts, generation] : named) EXPECT_EQ(pcie_generation(gts), generation) << gts;
  EXPECT_FALSE(pcie_generation(1.99));
  EXPECT_FALSE(pcie_generation(0.0));
}

TEST(Text, Parsers) {
  EXPECT_EQ(parse_hex("0x10de"), 0x10deu);
  EXPECT_EQ(parse_hex("10DE\n"), 0x10deu);
  EXPECT_FALSE(parse_hex("0x"));
  EXPECT_FALSE(parse_hex("zz"));
  EXPECT_EQ(parse_int(" -1\n"), -1);
  EXPECT_FALSE(parse_int("1a"));
  EXPECT_EQ(parse_double("16.0"), 16.0);
  EXPECT_FALSE(parse_double("16 GT/s"));
  EXPECT_EQ(find_field("vendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n", "model name", ':'), "AMD EPYC");
  EXPECT_EQ(split_whitespace("  a \t b  ").size(), 2u);
  EXPECT_TRUE(starts_with_ci("QEMU Standard PC", "qemu"));
}
