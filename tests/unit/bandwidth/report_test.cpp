// The bandwidth section end to end without hardware: JSON round trip, P2P verdicts, expected
// rates from a topology, findings and the rendered view.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "probes/bandwidth/copy_engine.hpp"
#include "probes/bandwidth/expected.hpp"
#include "probes/bandwidth/p2p_truth.hpp"
#include "common/errors.hpp"
#include "report/analysis/findings.hpp"
#include "model/json.hpp"
#include "report/render/renderers.hpp"

using namespace interprobe;

namespace {

report::BandwidthPoint point(std::int64_t bytes, double us, std::optional<bool> verified = true) {
  report::BandwidthPoint p;
  p.bytes = bytes;
  p.samples = 5;
  p.min_us = p.median_us = p.p95_us = p.max_us = us;
  p.cv_fraction = 0.004;
  p.gbps = double(bytes) / (us * 1e3);
  p.verified = verified;
  p.stop_reason = report::StopReason::target_cv;
  return p;
}

report::BandwidthSweep cuda_sweep(const std::string& kind, const std::string& src, const std::string& dst,
                                  double small_us, double large_gbps, bool corrupt = false) {
  report::BandwidthSweep s;
  s.engine = report::BandwidthEngine::cuda;
  s.kind = copy_kind(kind);
  s.src = src;
  s.dst = dst;
  s.memory_kind = report::is_host_to_device(s.kind) ? report::MemoryKind::pinned : report::MemoryKind::device;
  s.points = {point(4, small_us), point(256 << 20, double(256 << 20) / (large_gbps * 1e3), corrupt ? std::optional<bool>(false) : true)};
  return s;
}

report::Report report_with(report::BandwidthSection b) {
  report::Report r;
  r.tool.version = "test";
  r.host.started_at = "2026-01-01T00:00:00Z";
  r.bandwidth = std::move(b);
  return r;
}

const report::Finding* find(const std::vector<report::Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace

TEST(BandwidthReport, RoundTripsThroughJson) {
  report::BandwidthSection b;
  b.plan = report::BandwidthPlan::quick;
  b.target_cv_fraction = 0.02;
  b.engines = {{report::BandwidthEngine::host, report::EngineStatus::ok, std::nullopt, {"remote NUMA copies unavailable"}},
               {report::BandwidthEngine::cuda, report::EngineStatus::unsupported, "no driver", {}}};
  auto s = cuda_sweep("p2p_write_ce", "gpu0", "gpu1", 2.0, 40);
  s.threads = 4;
  s.fit = report::BandwidthFit{2.0, 40.0, 80000.0, 0.01, 2};
  s.expected_gbps = 31.5;
  s.expected_basis = "slowest PCIe link";
  s.notes = {"a note"};
  b.sweeps = {s};
  b.p2p_pairs = {{"gpu0", "gpu1", report::P2pTruth::p2p, true, 40.0, 20.0, 2.0, 12.0, "fine"}};
  auto text = report::to_json_text(report_with(b));
  auto back = report::parse_report_text(text, "test");
  ASSERT_TRUE(back.bandwidth);
  EXPECT_EQ(report::to_json_text(back), text);
  EXPECT_EQ(back.bandwidth->sweeps[0].points[1].bytes, 256 << 20);
  EXPECT_EQ(back.bandwidth->sweeps[0].fit->n_half_bytes, 80000.0);
  EXPECT_EQ(back.bandwidth->engines[1].reason, "no driver");
  EXPECT_EQ(back.bandwidth->p2p_pairs[0].truth, report::P2pTruth::p2p);
}

TEST(BandwidthReport, MissingRequiredKeyNamesItsPath) {
  auto text = report::to_json_text(report_with({report::BandwidthPlan::quick, 0.01, {}, {cuda_sweep("h2d", "node0", "gpu0", 3, 25)}, {}}));
  auto at = text.find("\"median_us\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 11, "\"median_xx\"");
  try {
    report::parse_report_text(text, "r.json");
    FAIL() << "accepted a point without median_us";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bandwidth.sweeps"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("median_us"), std::string::npos) << e.what();
  }
}

TEST(P2pTruth, ClassifiesEachPairFromMeasurements) {
  std::vector<report::BandwidthSweep> sweeps = {
      cuda_sweep("p2p_write_ce", "gpu0", "gpu1", 1.8, 380), cuda_sweep("p2p_off", "gpu0", "gpu1", 14, 37),   // real NVLink
      cuda_sweep("p2p_write_ce", "gpu0", "gpu2", 13, 20), cuda_sweep("p2p_off", "gpu0", "gpu2", 14, 19.5),  // claimed, staged
      cuda_sweep("p2p_off", "gpu0", "gpu3", 15, 20),                                                       // no peer access
      cuda_sweep("p2p_write_ce", "gpu1", "gpu2", 2.0, 26, /*corrupt=*/true),                              // data wrong
      cuda_sweep("p2p_write_ce", "gpu2", "gpu3", 12, 22)};                                                 // no P2P-off run
  auto pairs = classify_p2p_pairs({{"gpu0", "gpu1", true}, {"gpu0", "gpu2", true}, {"gpu0", "gpu3", false},
                                   {"gpu1", "gpu2", true}, {"gpu2", "gpu3", true}, {"gpu1", "gpu3", true}},
                                  sweeps);
  ASSERT_EQ(pairs.size(), 5u);  // gpu1 -> gpu3 claimed but never measured: no verdict
  EXPECT_EQ(pairs[0].truth, report::P2pTruth::p2p);
  EXPECT_EQ(pairs[1].truth, report::P2pTruth::claimed_but_staged);
  EXPECT_EQ(pairs[2].truth, report::P2pTruth::staged);
  EXPECT_EQ(pairs[3].truth, report::P2pTruth::corrupt);
  EXPECT_NE(pairs[3].reason.find("256 MiB"), std::string::npos);
  EXPECT_EQ(pairs[4].truth, report::P2pTruth::claimed_but_staged);  // 12 us per small copy: latency of staging
  EXPECT_EQ(pairs[0].staged_gbps, sweeps[1].points.back().gbps);
}

TEST(ExpectedRate, SlowestLinkOnThePath) {
  report::TopologySection t;
  auto dev = [](std::string bdf, std::optional<std::string> parent, double gbps, double gts, int width) {
    report::PciDevice d;
    d.bdf = std::move(bdf);
    d.parent_bdf = std::move(parent);
    d.link.current_gbps = gbps;
    d.link.current_gts = gts;
    d.link.current_lanes = width;
    return d;
  };
  // gpu0 Gen5 x16 behind a switch whose uplink trained at Gen4: the uplink limits.
  t.pci_devices = {dev("0000:01:00.0", std::nullopt, 31.5, 16, 16), dev("0000:02:00.0", "0000:01:00.0", 63.0, 32, 16),
                   dev("0000:03:00.0", "0000:02:00.0", 63.0, 32, 16), dev("0000:04:00.0", "0000:02:00.0", 63.0, 32, 16)};
  report::GpuPair nv;
  nv.a_bdf = "0000:03:00.0";
  nv.b_bdf = "0000:04:00.0";
  nv.nvlink_count = 18;
  nv.bottleneck_gbps = 450.0;  // the topology's NVLink figure (18 x 25 GB/s)
  nv.pcie_bottleneck_gbps = 63.0;
  report::GpuPair unknown_rate = nv;  // NVLinked, rate not known: no expectation, not the PCIe one
  unknown_rate.a_bdf = "0000:04:00.0";
  unknown_rate.b_bdf = "0000:05:00.0";
  unknown_rate.bottleneck_gbps = std::nullopt;
  report::GpuPair pcie;
  pcie.a_bdf = "0000:03:00.0";
  pcie.b_bdf = "0000:05:00.0";
  pcie.bottleneck_gbps = pcie.pcie_bottleneck_gbps = 31.5;
  t.gpu_pairs = {nv, unknown_rate, pcie};
  std::map<std::string, std::string> bdf = {{"gpu0", "0000:03:00.0"}, {"gpu1", "0000:04:00.0"}, {"gpu2", "0000:05:00.0"}};
  auto h2d = expected_rate(t, cuda_sweep("h2d", "node0", "gpu0", 3, 25), bdf);
  ASSERT_TRUE(h2d);
  EXPECT_DOUBLE_EQ(h2d->gbps, 31.5);
  EXPECT_NE(h2d->basis.find("16 GT/s x16"), std::string::npos) << h2d->basis;
  auto p2p = expected_rate(t, cuda_sweep("p2p_write_ce", "gpu0", "gpu1", 2, 380), bdf);
  ASSERT_TRUE(p2p);
  EXPECT_DOUBLE_EQ(p2p->gbps, 450.0);  // 18 NVLinks x 25 GB/s
  EXPECT_NE(p2p->basis.find("18 NVLinks x 25 GB/s per direction"), std::string::npos) << p2p->basis;
  EXPECT_FALSE(expected_rate(t, cuda_sweep("p2p_write_ce", "gpu1", "gpu2", 2, 380), bdf));
  auto over_pcie = expected_rate(t, cuda_sweep("p2p_write_ce", "gpu0", "gpu2", 2, 25), bdf);
  ASSERT_TRUE(over_pcie);
  EXPECT_DOUBLE_EQ(over_pcie->gbps, 31.5);
  EXPECT_NE(over_pcie->basis.find("slowest PCIe link"), std::string::npos) << over_pcie->basis;
  auto bidir = cuda_sweep("p2p_bidir_ce", "gpu0", "gpu1", 2, 760);
  bidir.directions = 2;
  EXPECT_DOUBLE_EQ(expected_rate(t, bidir, bdf)->gbps, 900.0);
  EXPECT_DOUBLE_EQ(expected_rate(t, cuda_sweep("p2p_off", "gpu0", "gpu1", 14, 20), bdf)->gbps, 31.5);
  EXPECT_FALSE(expected_rate(t, cuda_sweep("d2d", "gpu0", "gpu0", 2, 3000), bdf));
  EXPECT_FALSE(expected_rate(t, cuda_sweep("h2d", "node0", "gpu7", 3, 25), bdf));  // unknown GPU
}

TEST(BandwidthRules, CorruptP2pIsAFailNamingPathAndSize) {
  report::BandwidthSection b{report::BandwidthPlan::quick, 0.01, {}, {cuda_sweep("p2p_write_ce", "gpu0", "gpu1", 2, 300, true)}, {}};
  auto findings = analysis::derive_findings(report_with(b));
  const auto* f = find(findings, "bandwidth.p2p_data_corrupted");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, report::Severity::fail);
  EXPECT_NE(f->title.find("P2P reports OK but data is corrupted"), std::string::npos);
  EXPECT_NE(f->title.find("gpu0 -> gpu1"), std::string::npos);
  EXPECT_NE(f->title.find("256 MiB"), std::string::npos);
  EXPECT_EQ(f->affected, std::vector<std::string>{"gpu0 -> gpu1"});
  EXPECT_EQ(findings.front().id, "bandwidth.p2p_data_corrupted");  // fails sort first
}

TEST(BandwidthRules, BelowExpectedOnlyForLinkBoundPaths) {
  auto slow = cuda_sweep("h2d", "node0", "gpu0", 3, 12);  // 12 of 63 GB/s
  slow.expected_gbps = 63.0;
  auto pageable = slow;
  pageable.memory_kind = report::MemoryKind::pageable;  // half the link is normal for pageable memory
  auto healthy = cuda_sweep("d2h", "gpu0", "node0", 3, 55);
  healthy.memory_kind = report::MemoryKind::pinned;
  healthy.expected_gbps = 63.0;
  report::BandwidthSection b{report::BandwidthPlan::quick, 0.01, {}, {slow, pageable, healthy}, {}};
  auto findings = analysis::derive_findings(report_with(b));
  int below = 0;
  for (const auto& f : findings) below += f.id == "bandwidth.below_expected";
  EXPECT_EQ(below, 1);
}

TEST(BandwidthRules, StagedPairsUnsupportedEnginesAndNoise) {
  report::BandwidthSection b;
  b.plan = report::BandwidthPlan::quick;
  b.engines = {{report::BandwidthEngine::cuda, report::EngineStatus::unsupported, "no usable CUDA device", {}}};
  b.p2p_pairs = {{"gpu0", "gpu1", report::P2pTruth::claimed_but_staged, true, 20.0, 19.0, 12.0, 13.0, ""}};
  auto noisy = cuda_sweep("d2d", "gpu0", "gpu0", 2, 2000);
  for (int i = 0; i < 3; ++i) noisy.points.push_back(point(std::int64_t(8) << (20 + i), 100.0));
  for (auto& p : noisy.points) p.cv_fraction = 0.2;
  b.sweeps = {noisy};
  auto findings = analysis::derive_findings(report_with(b));
  ASSERT_TRUE(find(findings, "bandwidth.p2p_claimed_but_staged"));
  EXPECT_EQ(find(findings, "bandwidth.p2p_claimed_but_staged")->severity, report::Severity::warn);
  ASSERT_TRUE(find(findings, "bandwidth.engine_unsupported"));
  EXPECT_NE(find(findings, "bandwidth.engine_unsupported")->title.find("no usable CUDA device"), std::string::npos);
  EXPECT_TRUE(find(findings, "bandwidth.noisy"));
}

TEST(BandwidthView, RendersSweepsCurvesMatricesAndVerdicts) {
  auto s = cuda_sweep("p2p_write_ce", "gpu0", "gpu1", 1.8, 380);
  s.fit = report::BandwidthFit{1.8, 390.0, 702000.0, 0.02, 2};
  s.expected_gbps = 450;
  report::BandwidthSection b{report::BandwidthPlan::quick,
                             0.01,
                             {{report::BandwidthEngine::cuda, report::EngineStatus::ok, std::nullopt, {"gpu0 = 0000:03:00.0"}}},
                             {s},
                             {{"gpu0", "gpu1", report::P2pTruth::p2p, true, 380.0, 37.0, 1.8, 14.0, "peer access on"}}};
  auto text = render::render(report_with(b), render::Format::text, render::TextStyle{false, 400});
  for (const char* want : {"bandwidth", "cuda p2p_write_ce gpu0 -> gpu1", "390", "84%", "p2p_write_ce: GB/s at the largest",
                           "380 / 1.80", "P2P per GPU pair", "gpu0 = 0000:03:00.0"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  auto md = render::render(report_with(b), render::Format::markdown, render::TextStyle{false});
  EXPECT_NE(md.find("| # | path |"), std::string::npos) << md;  // the sweeps as a markdown table
}

TEST(BandwidthRules, OneFindingPerCauseListsEveryPairAndPath) {
  // Before grouping: one finding per pair and per slow path (an 8-GPU VM printed dozens).
  report::BandwidthSection b;
  b.p2p_pairs = {{"gpu0", "gpu1", report::P2pTruth::claimed_but_staged, true, 20.0, 19.0, 12.0, 13.0, ""},
                 {"gpu0", "gpu2", report::P2pTruth::claimed_but_staged, true, 21.0, 19.5, 11.0, 13.0, ""},
                 {"gpu1", "gpu2", report::P2pTruth::staged, false, std::nullopt, 19.0, std::nullopt, 13.0, ""}};
  auto slow0 = cuda_sweep("h2d", "node0", "gpu0", 3, 12), slow1 = cuda_sweep("h2d", "node0", "gpu1", 3, 30);
  slow0.expected_gbps = slow1.expected_gbps = 63.0;
  b.sweeps = {slow0, slow1};
  auto findings = analysis::derive_findings(report_with(b));
  auto count = [&](const std::string& id) { return std::count_if(findings.begin(), findings.end(), [&](auto& f) { return f.id == id; }); };
  EXPECT_EQ(count("bandwidth.p2p_claimed_but_staged"), 1);
  EXPECT_EQ(count("bandwidth.below_expected"), 1);
  const auto* staged = find(findings, "bandwidth.p2p_claimed_but_staged");
  ASSERT_TRUE(staged);
  EXPECT_EQ(staged->affected, (std::vector<std::string>{"gpu0 -> gpu1", "gpu0 -> gpu2"}));
  EXPECT_EQ(std::get<report::ValueList>(staged->evidence.at("p2p_gbps")).size(), 2u);
  ASSERT_TRUE(find(findings, "bandwidth.p2p_unavailable"));
  EXPECT_EQ(find(findings, "bandwidth.p2p_unavailable")->affected, std::vector<std::string>{"gpu1 -> gpu2"});
  const auto* below = find(findings, "bandwidth.below_expected");
  ASSERT_TRUE(below);
  EXPECT_EQ(below->affected,
            (std::vector<std::string>{"cuda h2d node0 -> gpu0", "cuda h2d node0 -> gpu1"}));
  EXPECT_NE(below->title.find("2 paths"), std::string::npos) << below->title;
  EXPECT_NE(below->title.find("gpu0"), std::string::npos) << below->title;  // the slowest is named
}

TEST(BandwidthReport, A1xReportReadsWithKeysAndValuesUpgraded) {
  // tests/golden/v1/bw-host.json: a real 1.x report (cv, target_cv, memory, fit residual/points).
  const auto r = report::read_report_file(std::string(INTERPROBE_SOURCE_DIR) + "/tests/golden/v1/bw-host.json");
  ASSERT_TRUE(r.bandwidth);
  const auto& b = *r.bandwidth;
  EXPECT_EQ(r.schema_version, report::kSchemaVersion);
  EXPECT_EQ(b.plan, report::BandwidthPlan::custom);
  EXPECT_DOUBLE_EQ(b.target_cv_fraction, 0.01);
  ASSERT_EQ(b.engines.size(), 1u);
  EXPECT_EQ(b.engines[0].engine, report::BandwidthEngine::host);
  EXPECT_EQ(b.engines[0].status, report::EngineStatus::ok);
  ASSERT_FALSE(b.sweeps.empty());
  const auto& s = b.sweeps[0];
  EXPECT_EQ(s.kind, report::CopyKind::memcpy);
  EXPECT_EQ(s.memory_kind, report::MemoryKind::pageable);
  EXPECT_EQ(s.status, report::SweepStatus::complete);
  ASSERT_FALSE(s.points.empty());
  EXPECT_DOUBLE_EQ(s.points[0].cv_fraction, 0.022882578009323324);  // the 1.x "cv"
  EXPECT_EQ(s.points[0].stop_reason, report::StopReason::budget);
  ASSERT_TRUE(s.fit);
  EXPECT_DOUBLE_EQ(s.fit->residual_fraction, 0.80666286915194);  // the 1.x "residual"
  EXPECT_EQ(s.fit->points_used, 2);                              // the 1.x "points"
  // And it renders: the view reads the upgraded values.
  auto text = render::render(r, render::Format::text, render::TextStyle{false, 400});
  EXPECT_NE(text.find("host memcpy node0 -> node0 pageable"), std::string::npos) << text;
}

TEST(BandwidthReport, A1xClaimedButStagedVerdictReadsAsTheEnum) {
  std::string text = report::to_json_text(report_with(
      {report::BandwidthPlan::quick, 0.01, {}, {}, {{"gpu0", "gpu1", report::P2pTruth::claimed_but_staged, true, 1.0, 1.0, 9.0, 9.0, "x"}}}));
  // Turn it back into what 1.x wrote.
  for (auto [from, to] : {std::pair<std::string, std::string>{"\"schema_version\": \"2.6.0\"", "\"schema_version\": \"1.0.0\""},
                          {"\"claimed_but_staged\"", "\"claimed-but-staged\""},
                          {"\"target_cv_fraction\"", "\"target_cv\""}}) {
    auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  auto back = report::parse_report_text(text, "1.x");
  ASSERT_TRUE(back.bandwidth);
  EXPECT_EQ(back.bandwidth->p2p_pairs.at(0).truth, report::P2pTruth::claimed_but_staged);
}

TEST(BandwidthReport, CopyKindsOfTheEnginesAreTheReportsVocabulary) {
  for (const auto& entry : names(report::CopyKind{})) EXPECT_EQ(copy_kind(entry.name), entry.value) << entry.name;
  EXPECT_THROW(copy_kind("p2p_write"), std::logic_error);  // a kind the report does not know is a bug, loudly
}

namespace {

report::BandwidthSweep host_sweep(std::int64_t src_huge, std::int64_t dst_huge) {
  report::BandwidthSweep s;
  s.engine = report::BandwidthEngine::host;
  s.kind = report::CopyKind::memcpy;
  s.src = s.dst = "node0";
  s.memory_kind = report::MemoryKind::pageable;
  s.threads = 1;
  s.pages = report::PagePolicy::automatic;
  s.buffers = {{report::HostBufferRole::src, 1 << 30, src_huge}, {report::HostBufferRole::dst, 1 << 30, dst_huge}};
  s.points = {point(1 << 20, 100.0), point(1 << 30, 100000.0)};
  return s;
}

}  // namespace

TEST(BandwidthReport, NewConditionsAndIntervalRoundTrip) {
  report::BandwidthSection b;
  b.plan = report::BandwidthPlan::custom;
  b.passes = 3;
  b.thp_mode = report::ThpMode::madvise;
  auto s = host_sweep(0, std::int64_t{512} << 20);
  s.points[0].median_ci_low_us = 98.5;
  s.points[0].median_ci_high_us = 103.25;
  s.points[0].copy_cpus = {0, 1};
  s.buffers.push_back({report::HostBufferRole::bounce, 512 << 10, std::nullopt});
  b.sweeps = {s};
  auto text = report::to_json_text(report_with(b));
  auto back = report::parse_report_text(text, "test");
  ASSERT_TRUE(back.bandwidth);
  EXPECT_EQ(report::to_json_text(back), text);
  EXPECT_EQ(back.bandwidth->passes, 3);
  EXPECT_EQ(back.bandwidth->thp_mode, report::ThpMode::madvise);
  const auto& p = back.bandwidth->sweeps[0].points[0];
  EXPECT_EQ(p.median_ci_low_us, 98.5);
  EXPECT_EQ(p.median_ci_high_us, 103.25);
  EXPECT_EQ(p.copy_cpus, (std::vector<std::int64_t>{0, 1}));
  EXPECT_FALSE(back.bandwidth->sweeps[0].points[1].median_ci_low_us);
  ASSERT_EQ(back.bandwidth->sweeps[0].buffers.size(), 3u);
  EXPECT_EQ(back.bandwidth->sweeps[0].buffers[1].huge_page_bytes, std::int64_t{512} << 20);
  EXPECT_FALSE(back.bandwidth->sweeps[0].buffers[2].huge_page_bytes);
  EXPECT_EQ(back.bandwidth->sweeps[0].pages, report::PagePolicy::automatic);
  // Reports written before these fields (1.x) still read.
  auto old = text;
  for (const char* key : {"\"passes\": 3,", ",\n    \"thp_mode\": \"madvise\""}) {
    auto at = old.find(key);
    ASSERT_NE(at, std::string::npos) << key << " in " << old.substr(0, 300);
    old.erase(at, std::string(key).size());
  }
  // (a 1.x report: 2.0 requires every key)
  old.replace(old.find("\"2.6.0\""), 7, "\"1.0.0\"");
  auto older = report::parse_report_text(old, "old");
  EXPECT_EQ(older.bandwidth->passes, 1);
  EXPECT_FALSE(older.bandwidth->thp_mode);
}

TEST(BandwidthRules, MixedPageBackingIsAnInfoFinding) {
  report::BandwidthSection b;
  b.plan = report::BandwidthPlan::custom;
  b.sweeps = {host_sweep(std::int64_t{1} << 30, 0), host_sweep(0, 0)};
  auto findings = analysis::derive_findings(report_with(b));
  const auto* f = find(findings, "bandwidth.mixed_page_backing");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, report::Severity::info);
  EXPECT_NE(f->title.find("src 100%, dst 0%"), std::string::npos) << f->title;
  int count = 0;
  for (const auto& x : findings) count += x.id == "bandwidth.mixed_page_backing";
  EXPECT_EQ(count, 1) << "the uniform sweep has none";
}

TEST(BandwidthView, ShowsAWideIntervalOfTheMedianAndTheConditions) {
  report::BandwidthSection b;
  b.plan = report::BandwidthPlan::custom;
  b.thp_mode = report::ThpMode::madvise;
  auto s = host_sweep(0, 0);
  s.points[0].median_ci_low_us = 90.0;  // 90..110 us: 20% wide -> shown as GB/s 9.53-11.7
  s.points[0].median_ci_high_us = 110.0;
  s.points[1].median_ci_low_us = 99000.0;  // 2% wide: not shown
  s.points[1].median_ci_high_us = 101000.0;
  s.points[1].copy_cpus = {1};
  b.sweeps = {s};
  auto text = render::render(report_with(b), render::Format::text, render::TextStyle{false});
  for (const char* want : {"[9.53-11.7]", "pages auto: src 0%, dst 0% in 2 MiB pages; copies ran on CPU 1",
                           "transparent, madvise", "95% interval"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  EXPECT_EQ(text.find("[10.6-10.8]"), std::string::npos) << text;
  EXPECT_EQ(text.find("[10."), std::string::npos) << "the narrow interval is left out\n" << text;
}
