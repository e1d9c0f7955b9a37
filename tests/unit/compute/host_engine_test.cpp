// The OpenBLAS host engine on this machine: results check out, bf16 follows the CPU flags, the
// stream read measures something. Skipped in a build without OpenBLAS.
#include <gtest/gtest.h>

#include "probes/compute/compute_sweep.hpp"
#include "probes/compute/host_engine.hpp"
#include "probes/compute/pattern.hpp"
#include "common/errors.hpp"

namespace interprobe {
namespace {

using report::ComputeDtype;

TEST(HostComputeEngine, WithoutOpenBlasItSaysHowToGetIt) {
  if (host_compute_available()) GTEST_SKIP() << "built with OpenBLAS";
  EXPECT_THROW(make_host_compute_engine({}), UnsupportedError);
  EXPECT_NE(host_compute_missing_reason().find("libopenblas-dev"), std::string::npos);
}

TEST(HostComputeEngine, SgemmResultsMatchTheReferenceAtOddShapes) {
  if (!host_compute_available()) GTEST_SKIP() << "built without OpenBLAS";
  HostComputeOptions o;
  o.threads = 1;
  auto engine = make_host_compute_engine(o);
  for (GemmShape shape : {GemmShape{1, 300, 129}, GemmShape{7, 64, 1000}, GemmShape{33, 17, 5}}) {
    engine->prepare(shape, ComputeDtype::f32);
    EXPECT_FALSE(check_gemm(*engine, shape, ComputeDtype::f32).passed) << "Y before any GEMM must not pass";
    EXPECT_GT(engine->gemm_s(2), 0);
    auto check = check_gemm(*engine, shape, ComputeDtype::f32);
    EXPECT_TRUE(check.passed) << shape.m << "x" << shape.n << "x" << shape.k << ": " << check.max_relative_error;
  }
}

TEST(HostComputeEngine, Bf16NeedsTheLibraryAndTheCpuFlags) {
  if (!host_compute_available()) GTEST_SKIP() << "built without OpenBLAS";
  HostComputeOptions o;
  o.threads = 1;
  o.cpu_flags = "fpu avx512f avx512_bf16 avx512_vnni";
  auto flagged = make_host_compute_engine(o);
  auto with_flags = flagged->supports(ComputeDtype::bf16);
  o.cpu_flags = "fpu sse avx2";
  auto plain = make_host_compute_engine(o);
  auto without = plain->supports(ComputeDtype::bf16);
  EXPECT_FALSE(without.supported);
  ASSERT_TRUE(without.reason);
  EXPECT_FALSE(plain->supports(ComputeDtype::fp8_e4m3).supported);
  if (!with_flags.supported) {
    // An OpenBLAS built without BUILD_BFLOAT16 (Debian's): the library is the reason, whatever the CPU.
    ASSERT_TRUE(with_flags.reason);
    EXPECT_NE(with_flags.reason->find("cblas_sbgemm"), std::string::npos) << *with_flags.reason;
    EXPECT_EQ(*without.reason, *with_flags.reason);
    EXPECT_THROW(flagged->prepare({1, 8, 8}, ComputeDtype::bf16), UnsupportedError);
    return;
  }
  EXPECT_NE(without.reason->find("avx512_bf16"), std::string::npos) << *without.reason;
  GemmShape shape{5, 96, 200};
  flagged->prepare(shape, ComputeDtype::bf16);
  flagged->gemm_s(1);
  EXPECT_TRUE(check_gemm(*flagged, shape, ComputeDtype::bf16).passed);
}

TEST(HostComputeEngine, StreamReadAndLaunchFloorAsDeclared) {
  if (!host_compute_available()) GTEST_SKIP() << "built without OpenBLAS";
  HostComputeOptions o;
  o.threads = 2;
  auto engine = make_host_compute_engine(o);
  auto variants = engine->stream_variants();
  ASSERT_EQ(variants.size(), 2u);
  EXPECT_EQ(variants[0].threads, 1);
  EXPECT_EQ(variants[1].threads, 2);
  engine->prepare_stream(1, 8 << 20);
  double s = engine->stream_read_s(2);
  EXPECT_GT(s, 0);
  EXPECT_LT(s, 5.0);
  EXPECT_TRUE(engine->launch_floor_unsupported());  // the host has no kernel launches
  auto info = engine->describe();
  EXPECT_EQ(info.library, "OpenBLAS");
  ASSERT_TRUE(info.library_version);
  EXPECT_FALSE(info.library_version->empty());
}

}  // namespace
}  // namespace interprobe
