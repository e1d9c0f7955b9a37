#include <gtest/gtest.h>

#include "probes/bandwidth/pattern.hpp"
#include "probes/bandwidth/size_plan.hpp"
#include "common/errors.hpp"

using namespace interprobe;

namespace {
std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(SizePlan, GeometricRangeEndsAtMax) {
  auto s = geometric_sizes(1, 1u << 30, 2);
  ASSERT_EQ(s.size(), 31u);
  EXPECT_EQ(s.front(), 1u);
  EXPECT_EQ(s.back(), 1u << 30);
  auto odd = geometric_sizes(3, 100, 2);
  EXPECT_EQ(odd, (std::vector<std::uint64_t>{3, 6, 12, 24, 48, 96, 100}));
  auto fine = geometric_sizes(1, 4, 1.1);  // rounding never repeats a size
  EXPECT_EQ(fine, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(geometric_sizes(64, 64, 2), (std::vector<std::uint64_t>{64}));
}

TEST(SizePlan, BadRangesNameTheOption) {
  EXPECT_NE(input_error([] { geometric_sizes(0, 1024, 2); }).find("--min"), std::string::npos);
  EXPECT_NE(input_error([] { geometric_sizes(4096, 1024, 2); }).find("--max"), std::string::npos);
  EXPECT_NE(input_error([] { geometric_sizes(1, 1024, 1.0); }).find("--factor"), std::string::npos);
  EXPECT_NE(input_error([] { geometric_sizes(1, 1024, -3); }).find("--factor"), std::string::npos);
}

TEST(SizePlan, ListsParseBinarySuffixes) {
  EXPECT_EQ(parse_size_list("1M, 4,64K,4", "--sizes"), (std::vector<std::uint64_t>{4, 65536, 1u << 20}));
  EXPECT_EQ(parse_size_list("1G", "--sizes"), (std::vector<std::uint64_t>{1u << 30}));
  auto err = input_error([] { parse_size_list("4,8Q", "--sizes"); });
  EXPECT_NE(err.find("--sizes"), std::string::npos);
  EXPECT_NE(err.find("8Q"), std::string::npos);
  EXPECT_NE(input_error([] { parse_size_list("0", "--sizes"); }).find("at least 1 byte"), std::string::npos);
  EXPECT_NE(input_error([] { parse_size_list(",", "--sizes"); }).find("--sizes"), std::string::npos);
}

TEST(SizePlan, CapKeepsSomethingToMeasure) {
  bool capped = false;
  EXPECT_EQ(cap_sizes({4, 1024, 1u << 20}, 4096, capped), (std::vector<std::uint64_t>{4, 1024}));
  EXPECT_TRUE(capped);
  EXPECT_EQ(cap_sizes({1u << 20}, 4096, capped), (std::vector<std::uint64_t>{4096}));
  EXPECT_EQ(cap_sizes({4, 8}, 4096, capped), (std::vector<std::uint64_t>{4, 8}));
  EXPECT_FALSE(capped);
}

TEST(SizePlan, MaxSizeCutsThePlanAndEndsAtTheCap) {
  const std::vector<std::uint64_t> plan{8, 64, 512, 4096};
  EXPECT_EQ(sizes_up_to(plan, 0), plan);      // no --max-size: the plan as it is
  EXPECT_EQ(sizes_up_to(plan, 1u << 20), plan);  // above the plan: nothing to cut
  EXPECT_EQ(sizes_up_to(plan, 512), (std::vector<std::uint64_t>{8, 64, 512}));
  EXPECT_EQ(sizes_up_to(plan, 1000), (std::vector<std::uint64_t>{8, 64, 512, 1000}));  // the cap is measured
  auto err = input_error([&] { sizes_up_to(plan, 4, "--max-size"); });
  EXPECT_NE(err.find("--max-size 4 B"), std::string::npos) << err;
  EXPECT_NE(err.find("give at least 8 B"), std::string::npos) << err;
}

TEST(Pattern, DetectsEveryKindOfDamage) {
  std::vector<unsigned char> buf(1003);
  fill_pattern(buf.data(), buf.size(), 7);
  EXPECT_EQ(count_pattern_mismatches(buf.data(), buf.size(), 7), 0u);
  EXPECT_GT(count_pattern_mismatches(buf.data(), buf.size(), 8), 900u);  // stale data of another size
  buf[1001] ^= 0x10;  // tail byte
  buf[17] = static_cast<unsigned char>(buf[17] + 1);
  EXPECT_EQ(count_pattern_mismatches(buf.data(), buf.size(), 7), 2u);
  for (std::uint64_t i = 0; i < 16; ++i) EXPECT_EQ(buf[i], pattern_byte(i, 7));
  std::vector<unsigned char> inverse(buf.size());
  fill_inverse(inverse.data(), buf.data(), buf.size());
  for (std::size_t i = 0; i < buf.size(); ++i) ASSERT_NE(inverse[i], buf[i]);
}
