// Sizes, types and options of a sweep; the input pattern whose sums are exact.
#include <gtest/gtest.h>

#include <cmath>

#include "probes/collective/allreduce_sweep.hpp"
#include "probes/collective/dtype.hpp"
#include "probes/collective/sweep_plan.hpp"
#include "common/errors.hpp"

namespace ic = interprobe::collective;
using ic::Dtype;
using interprobe::InputError;

namespace {

// Runs `f`, expects an InputError whose message contains `needle`.
template <class F>
void expect_input_error(F f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no InputError; expected one naming " << needle;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(SweepPlan, EightBytesToSixtyFourMibIsTwentyFourSizes) {
  auto sizes = interprobe::geometric_sizes(8, 64ull << 20, 2);
  ASSERT_EQ(sizes.size(), 24u);
  EXPECT_EQ(sizes.front(), 8u);
  EXPECT_EQ(sizes.back(), 64ull << 20);
  EXPECT_EQ(interprobe::geometric_sizes(8, 1ull << 30, 2).size(), 28u);
  auto odd = interprobe::geometric_sizes(10, 100, 1.5);  // rounded down, and --max itself last
  EXPECT_EQ(odd, (std::vector<std::uint64_t>{10, 15, 22, 33, 49, 73, 100}));
}

TEST(SweepPlan, BadSizesNameTheOption) {
  expect_input_error([] { interprobe::geometric_sizes(0, 64, 2); }, "--min 0");
  expect_input_error([] { interprobe::geometric_sizes(64, 8, 2); }, "--max");
  expect_input_error([] { interprobe::geometric_sizes(8, 64, 1); }, "--factor");
  expect_input_error([] { interprobe::parse_size_list("8,,16"); }, "--sizes");
  expect_input_error([] { interprobe::parse_size_list("8,4X"); }, "--sizes");
  expect_input_error([] { ic::parse_dtype_list("float,int8"); }, "--dtype 'int8'");
  ic::SweepPlan plan;
  expect_input_error([&] { ic::parse_placement("sideways", plan); }, "--placement");
}

TEST(SweepPlan, ListsAreSortedAndUnique) {
  EXPECT_EQ(interprobe::parse_size_list("1M, 8,1K,8"), (std::vector<std::uint64_t>{8, 1024, 1 << 20}));
  EXPECT_EQ(ic::parse_dtype_list("bf16,float,bfloat16"), (std::vector<Dtype>{Dtype::bfloat16, Dtype::float32}));
}

TEST(SweepPlan, ValidationRejectsSizesBelowOneElement) {
  ic::SweepPlan plan;
  plan.sizes_bytes = {2, 8};
  plan.dtypes = {Dtype::float16};
  EXPECT_NO_THROW(ic::validate_plan(plan));
  plan.dtypes = {Dtype::float16, Dtype::float32};
  expect_input_error([&] { ic::validate_plan(plan); }, "smaller than one float element");
  plan.sizes_bytes = {8};
  plan.iterations = 0;
  expect_input_error([&] { ic::validate_plan(plan); }, "--iters");
}

TEST(SweepPlan, DigestChangesWithAnythingThatChangesTheCalls) {
  constexpr auto mpi = interprobe::report::AllreduceBackend::mpi;
  constexpr auto standard = interprobe::report::AllreduceVariant::default_;
  ic::SweepPlan a;
  a.sizes_bytes = {8, 16};
  const auto base = ic::digest_text(a, mpi, {standard});
  EXPECT_EQ(base, ic::digest_text(a, mpi, {standard}));
  auto b = a;
  b.sizes_bytes = {8, 32};
  EXPECT_NE(base, ic::digest_text(b, mpi, {standard}));
  b = a;
  b.iterations = 21;
  EXPECT_NE(base, ic::digest_text(b, mpi, {standard}));
  b = a;
  b.in_place = false;
  EXPECT_NE(base, ic::digest_text(b, mpi, {standard}));
  EXPECT_NE(base, ic::digest_text(a, interprobe::report::AllreduceBackend::nccl, {standard}));
  EXPECT_NE(base, ic::digest_text(a, mpi, {interprobe::report::AllreduceVariant::p2p_off}));
}

TEST(Dtype, HalfAndBfloat16EncodeIntegersExactly) {
  for (int v = 0; v <= 2048; ++v) EXPECT_EQ(ic::half_to_float(ic::float_to_half(static_cast<float>(v))), v) << v;
  for (int v = 0; v <= 256; ++v) EXPECT_EQ(ic::bfloat16_to_float(ic::float_to_bfloat16(static_cast<float>(v))), v) << v;
  EXPECT_EQ(ic::float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(ic::float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(ic::float_to_half(1e6f), 0x7c00);           // overflow: infinity
  EXPECT_EQ(ic::float_to_half(2049.0f), ic::float_to_half(2048.0f));  // ties to even
  EXPECT_EQ(ic::float_to_bfloat16(1.0f), 0x3f80);
  EXPECT_EQ(ic::float_to_bfloat16(257.0f), ic::float_to_bfloat16(256.0f));
  EXPECT_FLOAT_EQ(ic::half_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(ic::float_to_half(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_TRUE(std::isnan(ic::half_to_float(0xffff)));      // the sentinel is NaN in every type
  EXPECT_TRUE(std::isnan(ic::bfloat16_to_float(0xffff)));
}

TEST(Pattern, SumsOverRanksAreExactInEveryType) {
  const std::size_t count = 97;
  for (Dtype dtype : {Dtype::float32, Dtype::float16, Dtype::bfloat16}) {
    for (int ranks : {1, 2, 3, 8, 255, 300, 3000}) {
      const std::size_t width = ic::element_bytes(dtype);
      std::vector<std::byte> input(count * width), expected(count * width);
      std::vector<double> sums(count, 0.0);
      bool any_nonzero_other_rank = false;
      for (int r = 0; r < ranks; ++r) {
        ic::fill_input(input.data(), count, dtype, r, ranks, 5);
        for (std::size_t i = 0; i < count; ++i) {
          const float v = ic::decode_element(dtype, input.data() + i * width);
          EXPECT_EQ(v, std::floor(v));
          sums[i] += v;
          any_nonzero_other_rank |= r > 0 && v != 0;
        }
      }
      ic::fill_expected(expected.data(), count, dtype, ranks, 5);
      for (std::size_t i = 0; i < count; ++i) {
        EXPECT_LE(sums[i], ic::exact_integer_limit(dtype));
        ASSERT_EQ(ic::decode_element(dtype, expected.data() + i * width), sums[i])
            << ic::to_string(dtype) << " ranks=" << ranks << " i=" << i;
      }
      if (ranks > 1) {
        EXPECT_TRUE(any_nonzero_other_rank) << "other ranks must contribute";
      }
    }
  }
}

TEST(Pattern, SaltChangesTheValues) {
  std::vector<std::byte> a(64 * 4), b(64 * 4);
  ic::fill_expected(a.data(), 64, Dtype::float32, 4, 1);
  ic::fill_expected(b.data(), 64, Dtype::float32, 4, 2);
  EXPECT_GT(ic::count_mismatches(a.data(), b.data(), 64, Dtype::float32), 32u);
  EXPECT_EQ(ic::count_mismatches(a.data(), a.data(), 64, Dtype::float32), 0u);
}
