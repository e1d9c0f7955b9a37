// The OpenBLAS host engine on this machine: results check out, bf16 follows the CPU flags (else
// weight-only, as fp8 always is), the stream read and the fork/join launch floor measure something.
// Skipped in a build without OpenBLAS.
#include <gtest/gtest.h>

#include <set>

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

TEST(HostComputeEngine, Bf16IsNativeWithTheLibraryAndTheCpuFlagsElseWeightOnly) {
  if (!host_compute_available()) GTEST_SKIP() << "built without OpenBLAS";
  HostComputeOptions o;
  o.threads = 1;
  o.cpu_flags = "fpu avx512f avx512_bf16 avx512_vnni";
  auto flagged = make_host_compute_engine(o);
  auto with_flags = flagged->supports(ComputeDtype::bf16);
  o.cpu_flags = "fpu sse avx2";
  auto plain = make_host_compute_engine(o);
  auto without = plain->supports(ComputeDtype::bf16);
  // Without the CPU's bf16 instructions: weights kept in bf16, multiplied in f32, and said so.
  EXPECT_TRUE(without.supported);
  EXPECT_TRUE(without.weight_only);
  ASSERT_TRUE(without.reason);
  EXPECT_NE(without.reason->find("weight-only"), std::string::npos) << *without.reason;
  auto fp8 = plain->supports(ComputeDtype::fp8_e4m3);
  EXPECT_TRUE(fp8.supported && fp8.weight_only);
  EXPECT_FALSE(plain->supports(ComputeDtype::f16).supported);
  EXPECT_FALSE(plain->supports(ComputeDtype::f32).weight_only);
  ASSERT_TRUE(with_flags.reason);
  if (with_flags.weight_only) {
    // An OpenBLAS built without BUILD_BFLOAT16 (Debian's): the library is the reason, whatever the CPU.
    EXPECT_NE(with_flags.reason->find("cblas_sbgemm"), std::string::npos) << *with_flags.reason;
  } else {
    EXPECT_EQ(*with_flags.reason, "cblas_sbgemm; the CPU has avx512_bf16");
  }
}

// The weight-only GEMM splits W's rows over the pool and decodes them a block at a time: odd
// shapes, one and three threads, rows fewer than threads, and a K whose block is a single row.
TEST(HostComputeEngine, WeightOnlyGemmsMatchTheReferenceAtOddShapes) {
  if (!host_compute_available()) GTEST_SKIP() << "built without OpenBLAS";
  for (unsigned threads : {1u, 3u}) {
    HostComputeOptions o;
    o.threads = threads;
    auto engine = make_host_compute_engine(o);
    for (ComputeDtype dtype : {ComputeDtype::bf16, ComputeDtype::fp8_e4m3}) {
      if (!engine->supports(dtype).weight_only) continue;
      for (GemmShape shape : {GemmShape{1, 300, 129}, GemmShape{7, 2, 1000}, GemmShape{33, 517, 5}, GemmShape{3, 5, 140000}}) {
        engine->prepare(shape, dtype);
        EXPECT_FALSE(check_gemm(*engine, shape, dtype).passed) << "Y before any GEMM must not pass";
        EXPECT_GT(engine->gemm_s(2), 0);
        auto check = check_gemm(*engine, shape, dtype);
        EXPECT_TRUE(check.passed) << to_string(dtype) << " " << threads << " threads " << shape.m << "x" << shape.n << "x"
                                  << shape.k << ": " << check.max_relative_error;
      }
    }
  }
}

// A sweep that names no dtype leaves the weight-only ones out; one that names them measures them.
TEST(HostComputeEngine, WeightOnlyDtypesAreMeasuredOnlyWhenAskedFor) {
  if (!host_compute_available()) GTEST_SKIP() << "built without OpenBLAS";
  HostComputeOptions o;
  o.threads = 1;
  auto engine = make_host_compute_engine(o);
  ComputeRequest r = compute_plan(report::ComputePlan::quick);
  r.shapes = {{"small", 64, 64, std::nullopt}, {"fp8 only", 32, 48, ComputeDtype::fp8_e4m3}};
  r.m_values = {1, 4};
  r.peak_size = 64;
  r.sweep.min_samples = 2;
  r.sweep.max_samples = 3;
  r.sweep.size_budget_s = 0.01;
  auto dtypes_measured = [&](const ComputeRequest& request) {
    report::ComputeEngineResult result;
    run_compute_engine(*engine, request, result, nullptr);
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& p : result.points) seen.insert({to_string(p.dtype), p.shape});
    return seen;
  };
  using Seen = std::set<std::pair<std::string, std::string>>;
  EXPECT_EQ(dtypes_measured(r), (Seen{{"f32", "small"}}));
  r.dtypes = {ComputeDtype::f32, ComputeDtype::fp8_e4m3};
  EXPECT_EQ(dtypes_measured(r), (Seen{{"f32", "small"}, {"fp8_e4m3", "small"}, {"fp8_e4m3", "fp8 only"}}));
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
  // The host's launch: an empty job forked to both threads and joined.
  EXPECT_FALSE(engine->launch_floor_unsupported());
  // Seconds for all of them, not per launch nor in ns. Idle, 100 take about 10 us here; under
  // ctest -j2 and ASan a worker that loses its CPU costs a scheduler slice each (1,000 took 1.17 s
  // in CI), so the bound only tells seconds from a wrong unit.
  double launches_s = engine->empty_launches_s(100);
  EXPECT_GT(launches_s, 0);
  EXPECT_LT(launches_s, 5.0) << "100 empty fork/joins of 2 threads";
  auto info = engine->describe();
  EXPECT_EQ(info.library, "OpenBLAS");
  ASSERT_TRUE(info.library_version);
  EXPECT_FALSE(info.library_version->empty());
}

}  // namespace
}  // namespace interprobe
