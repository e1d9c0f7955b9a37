// The compute sweep on a model engine: pattern and check, roofline rule, sweep, findings.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <set>

#include "common/fork_join_pool.hpp"
#include "fake_engine.hpp"
#include "probes/compute/compute_sweep.hpp"
#include "probes/compute/pattern.hpp"
#include "probes/compute/roofline.hpp"
#include "common/errors.hpp"
#include "report/analysis/findings.hpp"

namespace interprobe {
namespace {

using report::ComputeDtype;
using report::RooflineBound;
using testing::ModelComputeEngine;

TEST(ComputePattern, ValuesAreQuartersInMinusOneToOneAndExactInBf16) {
  std::set<float> seen;
  for (std::int64_t i = 0; i < 100000; ++i)
    for (auto op : {GemmOperand::x, GemmOperand::w}) {
      float v = compute_pattern_value(op, i);
      ASSERT_LE(std::fabs(v), 1.0f);
      ASSERT_EQ(v * 4, std::round(v * 4)) << v;
      std::uint32_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      ASSERT_EQ(bits & 0xffffu, 0u) << "bf16 would round " << v;
      seen.insert(v);
    }
  EXPECT_EQ(seen.size(), 9u);  // every value occurs, so the operands are not constant
  EXPECT_NE(compute_pattern_value(GemmOperand::x, 7), compute_pattern_value(GemmOperand::w, 7));
}

TEST(ComputePattern, CheckPassesExactOutputsAndFailsCorruptedOnes) {
  ModelComputeEngine engine;
  GemmShape shape{4, 96, 64};
  engine.prepare(shape, ComputeDtype::f32);
  auto ok = check_gemm(engine, shape, ComputeDtype::f32);
  EXPECT_TRUE(ok.passed);
  EXPECT_EQ(ok.max_relative_error, 0);
  EXPECT_GE(ok.elements_checked, 5);
  EXPECT_LE(ok.elements_checked, 48);
  engine.corrupt_bf16 = true;
  engine.prepare(shape, ComputeDtype::bf16);
  auto bad = check_gemm(engine, shape, ComputeDtype::bf16);
  EXPECT_FALSE(bad.passed);
  EXPECT_GT(bad.max_relative_error, bad.tolerance);
}

TEST(ComputePattern, CheckIndicesCoverCornersAndStayInside) {
  GemmShape shape{3, 5, 7};
  auto idx = check_indices(shape);
  EXPECT_EQ(idx.size(), 15u);  // 3 x 5 outputs: all of them, none twice
  for (const auto& i : idx) {
    EXPECT_LT(i.row, 3);
    EXPECT_LT(i.col, 5);
  }
}

report::GemmPoint point(std::int64_t m, std::int64_t n, std::int64_t k, ComputeDtype d, double median_us) {
  report::GemmPoint p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.dtype = d;
  p.timing.median_us = median_us;
  return p;
}

TEST(Roofline, RidgeDecidesMemoryOrComputeAndTheLaunchFloorLatency) {
  Ceilings c{100.0, 10.0, std::nullopt};  // ridge: 10e12 / 100e9 = 100 flop per byte
  EXPECT_EQ(roofline_bound(point(1, 4096, 4096, ComputeDtype::bf16, 1), c), RooflineBound::memory);
  EXPECT_EQ(roofline_bound(point(512, 4096, 4096, ComputeDtype::bf16, 1), c), RooflineBound::compute);
  // f32 64^3: 10.7 flop per byte, below the ridge.
  EXPECT_EQ(roofline_bound(point(64, 64, 64, ComputeDtype::f32, 1), c), RooflineBound::memory);
  c.launch_floor_us = 5;
  EXPECT_EQ(roofline_bound(point(1, 256, 256, ComputeDtype::f32, 1), c), RooflineBound::latency);
  EXPECT_EQ(roofline_bound(point(1, 4096, 4096, ComputeDtype::f32, 1), c), RooflineBound::memory);
  EXPECT_FALSE(roofline_bound(point(1, 64, 64, ComputeDtype::f32, 1), Ceilings{std::nullopt, 10.0, std::nullopt}));
}

TEST(Roofline, DerivedNumbersFollowTheirDefinitions) {
  auto p = point(2, 1000, 500, ComputeDtype::bf16, 100);  // 2 M N K = 2e6 flop in 100 us
  derive_point(p, {10.0, 0.1, std::nullopt});
  EXPECT_DOUBLE_EQ(p.tflops, 0.02);
  EXPECT_EQ(p.weight_bytes, 1000 * 500 * 2);
  EXPECT_DOUBLE_EQ(p.weight_gbps, 1e6 / 100e-6 / 1e9);
  double bytes = (2 * 500 + 1000 * 500) * 2.0 + 2 * 1000 * 4.0;
  EXPECT_DOUBLE_EQ(p.flop_per_byte, 2e6 / bytes);
  EXPECT_DOUBLE_EQ(*p.peak_fraction, 0.2);
  EXPECT_DOUBLE_EQ(*p.memory_bandwidth_fraction, bytes / 100e-6 / 1e9 / 10.0);
}

ComputeRequest small_request() {
  ComputeRequest r = compute_plan(report::ComputePlan::quick);
  r.shapes = {{"o", 2048, 1024}};
  r.m_values = {1, 8, 512};
  return r;
}

report::Report run_model(ModelComputeEngine& engine, const ComputeRequest& r) {
  report::Report rep;
  rep.compute = report::ComputeSection{};
  rep.compute->engines.push_back({});
  run_compute_engine(engine, r, rep.compute->engines.back());
  rep.findings = analysis::derive_findings(rep);
  return rep;
}

TEST(ComputeSweep, ModelEngineGivesCeilingsPeaksAndVerifiedPointsOnTheRoofline) {
  ModelComputeEngine engine;
  auto rep = run_model(engine, small_request());
  const auto& e = rep.compute->engines.at(0);
  ASSERT_EQ(e.memory.size(), 1u);
  EXPECT_NEAR(*e.memory_ceiling_gbps, 100, 1e-6);
  EXPECT_FALSE(e.launch_floor_us);
  EXPECT_EQ(e.launch_floor_reason, "the model has no launches");
  ASSERT_EQ(e.peaks.size(), 2u);  // f32 and bf16; f16 and fp8 listed unsupported with the reason
  EXPECT_EQ(e.dtypes.size(), 4u);
  EXPECT_FALSE(e.dtypes[2].supported);
  EXPECT_TRUE(e.dtypes[2].reason);
  for (const auto& p : e.peaks) EXPECT_NEAR(p.measured_tflops, 10, 1e-6);  // 1024^3 is compute-bound in the model
  ASSERT_EQ(e.points.size(), 6u);
  for (const auto& p : e.points) {
    ASSERT_TRUE(p.check);
    EXPECT_TRUE(p.check->passed);
    EXPECT_GE(p.timing.samples, 6);
    EXPECT_TRUE(p.timing.median_ci_low_us);
    EXPECT_LE(*p.peak_fraction, 1.0 + 1e-9);
    EXPECT_LE(*p.memory_bandwidth_fraction, 1.0 + 1e-9);
    EXPECT_EQ(p.bound, p.m == 512 ? RooflineBound::compute : RooflineBound::memory) << p.m;
  }
  std::set<std::string> ids;
  for (const auto& f : rep.findings) ids.insert(f.id);
  EXPECT_TRUE(ids.count("compute.decode_memory_bound"));
  EXPECT_FALSE(ids.count("compute.verification_failed"));
  EXPECT_FALSE(ids.count("compute.inconsistent_point"));
}

// run's host engine: points stop once the limit is spent, each one left says how to measure it;
// a GPU engine under the same request is not limited.
TEST(ComputeSweep, TheHostEnginesPointsStopAtTheirTimeLimitAndSayWhatIsLeft) {
  ComputeRequest r = small_request();
  r.host_points_limit_s = 0;  // spent before the first point
  for (auto kind : {report::ComputeEngineKind::host, report::ComputeEngineKind::cuda}) {
    ModelComputeEngine engine;
    report::ComputeEngineResult e;
    e.engine = kind;
    run_compute_engine(engine, r, e);
    EXPECT_EQ(e.peaks.size(), 2u);  // the ceilings and peaks are measured either way
    std::size_t skipped = 0;
    for (const auto& n : e.notes)
      if (n.find("skipped: the 0 s this engine's GEMMs may take here were spent") != std::string::npos) ++skipped;
    if (kind == report::ComputeEngineKind::host) {
      EXPECT_TRUE(e.points.empty());
      EXPECT_EQ(skipped, 6u);
      EXPECT_TRUE(std::any_of(e.notes.begin(), e.notes.end(), [](const std::string& n) {
        return n == "bf16 M=512 2048x1024 skipped: the 0 s this engine's GEMMs may take here were spent (`interprobe "
                    "compute --engine host --shapes 2048x1024 --m 512 --dtype bf16` measures it)";
      })) << ::testing::PrintToString(e.notes);
    } else {
      EXPECT_EQ(e.points.size(), 6u);
      EXPECT_EQ(skipped, 0u);
    }
  }
}

TEST(ComputeSweep, CorruptingEngineGivesAFailFindingNamingShapeAndDtype) {
  ModelComputeEngine engine;
  engine.corrupt_bf16 = true;
  auto rep = run_model(engine, small_request());
  const report::Finding* failed = nullptr;
  for (const auto& f : rep.findings)
    if (f.id == "compute.verification_failed") failed = &f;
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->severity, report::Severity::fail);
  ASSERT_EQ(failed->affected.size(), 4u);  // the bf16 peak and the three bf16 points; no f32 point
  EXPECT_NE(failed->affected[1].find("bf16 o M=1 (1x2048x1024)"), std::string::npos) << failed->affected[1];
  for (const auto& a : failed->affected) EXPECT_EQ(a.find("f32"), std::string::npos) << a;
}

TEST(ComputeSweep, PointsFasterThanMemoryAreFlaggedInconsistent) {
  ModelComputeEngine engine;
  engine.cache_speedup = 3;  // GEMMs read at 3x the stream rate: weights from a cache
  auto rep = run_model(engine, small_request());
  const report::Finding* flagged = nullptr;
  for (const auto& f : rep.findings)
    if (f.id == "compute.inconsistent_point") flagged = &f;
  ASSERT_TRUE(flagged);
  EXPECT_EQ(flagged->severity, report::Severity::warn);
  EXPECT_EQ(flagged->affected.size(), 4u);  // M = 1 and 8 of both dtypes; M = 512 is compute-bound
}

TEST(ComputeSweep, LaunchFloorMakesTinyGemmsLatencyBound) {
  ModelComputeEngine engine;
  engine.launch_us = 50;
  ComputeRequest r = small_request();
  r.shapes = {{"tiny", 64, 64}};
  auto rep = run_model(engine, r);
  const auto& e = rep.compute->engines.at(0);
  ASSERT_TRUE(e.launch_floor_us);
  EXPECT_NEAR(*e.launch_floor_us, 50, 1e-6);
  EXPECT_FALSE(e.launch_floor_graph_us);  // an engine without graphs leaves it null
  for (const auto& p : e.points) EXPECT_EQ(p.bound, RooflineBound::latency);
}

TEST(ComputeSweep, RequestedDtypesNoneSupportedIsUnsupportedWithTheReason) {
  ModelComputeEngine engine;
  ComputeRequest r = small_request();
  r.dtypes = {ComputeDtype::fp8_e4m3};
  report::ComputeEngineResult result;
  try {
    run_compute_engine(engine, r, result);
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("fp8_e4m3: the model runs f32 and bf16"), std::string::npos) << e.what();
  }
}

TEST(ComputeSweep, BadRequestsAreInputErrorsNamingTheOption) {
  auto r = small_request();
  r.m_values = {0};
  EXPECT_THROW(validate_compute_request(r), InputError);
  r = small_request();
  r.shapes.clear();
  EXPECT_THROW(validate_compute_request(r), InputError);
  r = small_request();
  r.sweep.target_cv = 0;
  EXPECT_THROW(validate_compute_request(r), InputError);
  EXPECT_NO_THROW(validate_compute_request(small_request()));
}

}  // namespace
}  // namespace interprobe

namespace interprobe {
namespace {

report::Report one_engine(report::ComputeEngineResult e) {
  report::Report r;
  r.compute = report::ComputeSection{};
  r.compute->engines.push_back(std::move(e));
  return r;
}

// A pointer into a temporary would dangle (ASan caught it): findings must outlive the pointer.
const report::Finding* find_id(std::vector<report::Finding>&& findings, const std::string& id) = delete;
const report::Finding* find_id(const std::vector<report::Finding>& findings, const std::string& id) {
  for (const auto& f : findings)
    if (f.id == id) return &f;
  return nullptr;
}

TEST(ComputeRules, PointAboveThePeakSaysThePeakIsNoCeiling) {
  report::ComputeEngineResult e;
  auto p = point(64, 4096, 4096, ComputeDtype::f32, 1000);
  derive_point(p, {100.0, 0.01, std::nullopt});  // 2.1 TFLOP/s measured against a 0.01 peak
  e.points.push_back(p);
  auto findings = analysis::derive_findings(one_engine(e));
  const auto* f = find_id(findings, "compute.peak_below_shape");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, report::Severity::warn);
  ASSERT_EQ(f->affected.size(), 1u);
  EXPECT_NE(f->affected[0].find("M=64"), std::string::npos);
  // Within 10% of the peak is noise, not a finding.
  e.points[0].peak_fraction = 1.05;
  auto within_noise = analysis::derive_findings(one_engine(e));
  EXPECT_FALSE(find_id(within_noise, "compute.peak_below_shape"));
  // The sweep takes peak_fraction against a point that beat the square GEMM (1.0 here): the rule
  // compares with the square GEMM's own rate.
  e.points[0].peak_fraction = 1.0;
  report::ComputePeak square;
  square.dtype = ComputeDtype::f32;
  square.measured_tflops = e.points[0].tflops / 2;
  e.peaks.push_back(square);
  auto rebased = analysis::derive_findings(one_engine(e));
  const auto* again = find_id(rebased, "compute.peak_below_shape");
  ASSERT_TRUE(again);
  EXPECT_NE(again->affected.at(0).find("M=64"), std::string::npos);
}

TEST(ComputeRules, UnsupportedIsInfoAndFailedIsWarnWithTheReason) {
  report::ComputeEngineResult e;
  e.engine = report::ComputeEngineKind::cuda;
  e.status = report::EngineStatus::unsupported;
  e.reason = "no GPU";
  auto unsupported = analysis::derive_findings(one_engine(e));
  const auto* f = find_id(unsupported, "compute.engine_unsupported");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, report::Severity::info);
  EXPECT_NE(f->title.find("no GPU"), std::string::npos);
  e.status = report::EngineStatus::failed;
  auto findings = analysis::derive_findings(one_engine(e));
  f = find_id(findings, "compute.engine_failed");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, report::Severity::warn);
}

TEST(ComputeRules, DecodeFindingNeedsEverySmallMPointMemoryBound) {
  // f32 at N = K = 4096: M = 1 has 0.5 flop per byte, M = 8 has 3.98, M = 64 has 31.
  auto engine_at = [](double peak_tflops) {
    report::ComputeEngineResult e;
    for (std::int64_t m : {1, 8, 64}) {
      auto p = point(m, 4096, 4096, ComputeDtype::f32, 20000);
      derive_point(p, {10.0, peak_tflops, std::nullopt});
      e.points.push_back(p);
    }
    return e;
  };
  auto ridge5 = engine_at(0.05);  // ridge 5 flop per byte: M = 1 and 8 memory-bound, 64 compute
  auto at_ridge5 = analysis::derive_findings(one_engine(ridge5));
  const auto* f = find_id(at_ridge5, "compute.decode_memory_bound");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->affected.size(), 2u);  // M = 64 is not a decode point
  EXPECT_EQ(std::get<std::int64_t>(f->evidence.at("max_m")), 8);
  auto ridge2 = engine_at(0.02);  // ridge 2: M = 8 turns compute-bound, so decode is not all memory-bound
  ASSERT_EQ(ridge2.points[1].bound, RooflineBound::compute);
  auto at_ridge2 = analysis::derive_findings(one_engine(ridge2));
  EXPECT_FALSE(find_id(at_ridge2, "compute.decode_memory_bound"));
}

// Every run hands the job to every worker once, the caller included, and returns only after all
// of them finished: 2000 runs of 3 workers leave exactly 2000 marks per worker.
TEST(ForkJoinPool, EveryWorkerRunsEveryJobOnceAndRunWaitsForAll) {
  std::vector<int> started;
  std::mutex started_lock;
  ForkJoinPool pool(3, 4000, [&] {
    std::lock_guard<std::mutex> hold(started_lock);
    started.push_back(1);
  });
  ASSERT_EQ(pool.size(), 3u);
  std::vector<std::atomic<int>> marks(3);
  for (int i = 0; i < 2000; ++i) {
    pool.run([&](unsigned w) { marks.at(w).fetch_add(1); });
    for (unsigned w = 0; w < 3; ++w) ASSERT_EQ(marks[w].load(), i + 1) << "run " << i << " worker " << w;
  }
  EXPECT_EQ(started.size(), 2u) << "each helper ran on_start once";
  ForkJoinPool alone(0, 0);  // at least the caller
  int ran = 0;
  alone.run([&](unsigned w) { ran += static_cast<int>(w) + 1; });
  EXPECT_EQ(ran, 1);
}

}  // namespace
}  // namespace interprobe
