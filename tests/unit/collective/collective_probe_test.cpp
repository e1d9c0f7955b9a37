// The collective probe with test-double backends: sections, hangs, agreement between ranks,
// findings, JSON round trip and the nccl-tests-like table.
#include <gtest/gtest.h>

#include <sstream>

#include "probes/collective/collective_probe.hpp"
#include "common/cpuid.hpp"
#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/progress.hpp"
#include "common/units.hpp"
#include "probes/collective/allreduce_sweep.hpp"
#include "report/analysis/findings.hpp"
#include "model/json.hpp"
#include "report/render/renderers.hpp"
#include "unit/collective/fake_backend.hpp"

namespace ic = interprobe::collective;
using ic::testing::FakeBackend;
using interprobe::report::Report;

namespace {

struct Harness {
  interprobe::HostRoot root;
  std::unique_ptr<interprobe::CpuidSource> cpuid = interprobe::make_cpuid_source(root);
  interprobe::ProbeContext ctx{root, *cpuid, interprobe::Progress::disabled()};
};

using interprobe::report::AllreduceBackend;
using interprobe::report::AllreduceStatus;
using interprobe::report::AllreduceVariant;
using interprobe::report::Dtype;

ic::CollectiveRequest request(AllreduceBackend backend) {
  ic::CollectiveRequest r;
  r.backend = backend;
  r.plan.sizes_bytes = interprobe::geometric_sizes(8, 2048, 4);
  r.plan.dtypes = {ic::Dtype::float32, ic::Dtype::float16};
  r.plan.iterations = 2;
  r.plan.samples = 2;
  r.plan.warmup_iterations = 1;
  return r;
}

// Backends made by the factory, standing in for `kind`: the first `hang_first` ones hang at 128 bytes.
ic::BackendFactory fakes(AllreduceBackend kind, int ranks, int* made, int hang_first = 0) {
  return [=](ic::RankGroup& g, AllreduceVariant) {
    auto b = std::make_unique<FakeBackend>(g, ranks);
    b->imitates = kind;
    if ((*made)++ < hang_first) b->hang_at_bytes = 128;
    return std::unique_ptr<ic::CollectiveBackend>(std::move(b));
  };
}

// A report with only the header the renderers need; the tests add their all-reduce sweep.
Report header_only_report() {
  Report r;
  r.tool.version = "test";
  r.host.started_at = "2026-01-01T00:00:00Z";
  return r;
}

}  // namespace

TEST(CollectiveProbe, OneSweepPerTypeWithHeaderAndPoints) {
  Harness h;
  ic::SingleProcessGroup group;
  int made = 0;
  auto probe = ic::make_allreduce_probe(request(AllreduceBackend::mpi), group, fakes(AllreduceBackend::mpi, 4, &made));
  EXPECT_EQ(probe->name(), "collective");
  Report r;
  probe->run(h.ctx, r);
  ASSERT_TRUE(r.collective);
  ASSERT_EQ(r.collective->allreduce.size(), 2u);
  EXPECT_EQ(made, 1);  // one backend serves every type
  const auto& s = r.collective->allreduce[1];
  EXPECT_EQ(s.backend, AllreduceBackend::mpi);
  EXPECT_EQ(s.ranks, 4);
  EXPECT_EQ(s.dtype, Dtype::float16);
  EXPECT_EQ(s.status, AllreduceStatus::complete);
  EXPECT_EQ(s.library_version, "fake 1.0");
  EXPECT_EQ(s.points.size(), 2u * 5u);  // 8, 32, 128, 512, 2048; out-of-place and in-place
  EXPECT_EQ(s.summary.latency_bytes, 8);
}

TEST(CollectiveProbe, AHangIsRecordedAndTheNextTypeGetsAFreshBackend) {
  Harness h;
  ic::SingleProcessGroup group;
  int made = 0;
  auto probe = ic::make_allreduce_probe(request(AllreduceBackend::nccl), group, fakes(AllreduceBackend::nccl, 2, &made, 1));
  Report r;
  probe->run(h.ctx, r);  // a hang is data, not a probe failure
  ASSERT_EQ(r.collective->allreduce.size(), 2u);
  const auto& hung = r.collective->allreduce[0];
  EXPECT_EQ(hung.status, AllreduceStatus::hung);
  EXPECT_EQ(hung.hung_at_bytes, 128);
  EXPECT_EQ(r.collective->allreduce[1].status, AllreduceStatus::complete);
  EXPECT_EQ(made, 2);
  auto findings = interprobe::analysis::derive_findings(r);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().id, "collective.allreduce_hung");
  EXPECT_EQ(findings.front().severity, interprobe::report::Severity::fail);
  EXPECT_EQ(findings.front().title.rfind("all-reduce hung at 128 bytes", 0), 0u) << findings.front().title;
  EXPECT_EQ(findings.front().affected, std::vector<std::string>{"nccl default 2 ranks float"});
}

TEST(CollectiveProbe, RanksWithOtherOptionsFailOnEveryRankInsteadOfHanging) {
  Harness h;
  ic::testing::DisagreeingGroup group("backend=mpi variants=default sizes=8");
  int made = 0;
  auto probe = ic::make_allreduce_probe(request(AllreduceBackend::mpi), group, fakes(AllreduceBackend::mpi, 2, &made));
  Report r;
  try {
    probe->run(h.ctx, r);
    FAIL() << "no error";
  } catch (const interprobe::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 has 'backend=mpi variants=default sizes=8'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(made, 0);  // no collective was started
}

TEST(CollectiveProbe, VariantsAreNcclOnlyAndOnePerMpiLaunch) {
  Harness h;
  ic::SingleProcessGroup single;
  int made = 0;
  auto r = request(AllreduceBackend::mpi);
  r.variants = {AllreduceVariant::default_, AllreduceVariant::p2p_off};
  Report report;
  EXPECT_THROW(ic::make_allreduce_probe(r, single, fakes(AllreduceBackend::mpi, 2, &made))->run(h.ctx, report), interprobe::InputError);
}

TEST(CollectiveProbe, FurtherNcclVariantsNeedAFreshProcess) {
  // NCCL reads NCCL_P2P_DISABLE once per process: without the path of interprobe the second
  // variant cannot be measured, and says so instead of silently repeating the first.
  Harness h;
  ic::SingleProcessGroup group;
  int made = 0;
  auto r = request(AllreduceBackend::nccl);
  r.plan.dtypes = {ic::Dtype::float32};
  r.variants = {AllreduceVariant::default_, AllreduceVariant::p2p_off};
  Report report;
  EXPECT_NO_THROW(ic::make_allreduce_probe(r, group, fakes(AllreduceBackend::nccl, 2, &made))->run(h.ctx, report));
  ASSERT_EQ(report.collective->allreduce.size(), 2u);
  EXPECT_EQ(report.collective->allreduce[0].status, AllreduceStatus::complete);
  EXPECT_EQ(report.collective->allreduce[1].variant, AllreduceVariant::p2p_off);
  EXPECT_EQ(report.collective->allreduce[1].status, AllreduceStatus::failed);
  EXPECT_NE(report.collective->allreduce[1].reason->find("fresh process"), std::string::npos);
}

TEST(CollectiveProbe, ReplayedRootIsUnsupported) {
  interprobe::HostRoot root(std::string(INTERPROBE_FIXTURES) + "/minimal-kvm-guest");
  auto cpuid = interprobe::make_cpuid_source(root);
  interprobe::ProbeContext ctx{root, *cpuid, interprobe::Progress::disabled()};
  ic::SingleProcessGroup group;
  Report r;
  EXPECT_THROW(ic::make_run_collective_probe()->run(ctx, r), interprobe::UnsupportedError);
}

TEST(CollectiveProbe, ChildArgumentsCarryThePlan) {
  auto r = request(AllreduceBackend::nccl);
  auto args = ic::child_arguments(r, AllreduceVariant::shm_off);
  auto has = [&](const std::string& key, const std::string& value) {
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == key) return args[i + 1] == value;
    return false;
  };
  EXPECT_EQ(args.front(), "allreduce");
  EXPECT_TRUE(has("--backend", "nccl"));
  EXPECT_TRUE(has("--variant", "shm-off"));  // the command line's spelling, not the report's
  EXPECT_TRUE(has("--sizes", "8,32,128,512,2048"));
  EXPECT_TRUE(has("--dtype", "float,half"));
  EXPECT_TRUE(has("--iters", "2"));
}

TEST(CollectiveReport, JsonRoundTripAndTable) {
  Harness h;
  ic::SingleProcessGroup group;
  int made = 0;
  Report r;
  r.tool.version = "test";
  r.host.started_at = "2026-01-01T00:00:00Z";
  ic::make_allreduce_probe(request(AllreduceBackend::mpi), group, fakes(AllreduceBackend::mpi, 2, &made))->run(h.ctx, r);
  auto& s = r.collective->allreduce[0];
  s.transports = {{"P2P/CUMEM", 24}};
  s.algorithms = {{8, "Ring", "LL", 10}, {32, "Ring", "LL", 10}, {128, "Tree", "LL128", 5}};
  s.environment = {{"NCCL_P2P_DISABLE", "1"}};
  auto text = interprobe::report::to_json_text(r, 2);
  auto back = interprobe::report::parse_report_text(text, "round trip");
  EXPECT_EQ(interprobe::report::to_json_text(back, 2), text);
  ASSERT_TRUE(back.collective);
  EXPECT_EQ(back.collective->allreduce[0].points.size(), s.points.size());
  EXPECT_EQ(back.collective->allreduce[0].algorithms[2].protocol, "LL128");

  auto md = interprobe::render::render(back, interprobe::render::Format::markdown, {});
  EXPECT_NE(md.find("all-reduce: mpi default 2 ranks, float"), std::string::npos) << md;
  EXPECT_NE(md.find("out #wrong"), std::string::npos);
  EXPECT_NE(md.find("latency at 8 B"), std::string::npos);
  EXPECT_NE(md.find("8 .. 32"), std::string::npos);  // equal choices collapse
  EXPECT_NE(md.find("P2P/CUMEM (24 connections)"), std::string::npos);
  auto plain = interprobe::render::render(back, interprobe::render::Format::text, {});
  EXPECT_NE(plain.find("busbw"), std::string::npos);
}

TEST(CollectiveReport, A1xReportReadsWithKeysUpgraded) {
  // tests/golden/v1/allreduce-mpi.json: a real 1.x report (count, wrong, wrong_total).
  const auto r = interprobe::report::read_report_file(std::string(INTERPROBE_SOURCE_DIR) + "/tests/golden/v1/allreduce-mpi.json");
  ASSERT_TRUE(r.collective);
  ASSERT_EQ(r.collective->allreduce.size(), 1u);
  const auto& s = r.collective->allreduce[0];
  EXPECT_EQ(s.backend, AllreduceBackend::mpi);
  EXPECT_EQ(s.variant, AllreduceVariant::default_);
  EXPECT_EQ(s.dtype, Dtype::float32);
  EXPECT_EQ(s.status, AllreduceStatus::complete);
  ASSERT_FALSE(s.points.empty());
  EXPECT_EQ(s.points[0].bytes, 8);
  EXPECT_EQ(s.points[0].elements_per_rank, 2);  // the 1.x "count"
  EXPECT_EQ(s.points[0].wrong_elements, 0);     // the 1.x "wrong"
  EXPECT_EQ(s.summary.wrong_elements_total, 0);
  EXPECT_EQ(s.summary.plateau_from_bytes, 65536);
  auto text = interprobe::render::render(r, interprobe::render::Format::text, {});
  EXPECT_NE(text.find("all-reduce: mpi default 2 ranks, float"), std::string::npos) << text;
}

TEST(CollectiveReport, A1xP2pOffVariantAndWrongCountsUpgrade) {
  Report r = header_only_report();
  auto& s = r.collective.emplace().allreduce.emplace_back();
  s.variant = AllreduceVariant::p2p_off;
  s.ranks = 2;
  auto& p = s.points.emplace_back();
  p.bytes = 8;
  p.elements_per_rank = 2;
  p.wrong_elements = 1;
  s.summary.wrong_elements_total = 1;
  std::string text = interprobe::report::to_json_text(r, 2);
  for (auto [from, to] : {std::pair<std::string, std::string>{"\"schema_version\": \"2.6.0\"", "\"schema_version\": \"1.0.0\""},
                          {"\"p2p_off\"", "\"p2p-off\""},
                          {"\"elements_per_rank\"", "\"count\""},
                          {"\"wrong_elements_total\"", "\"wrong_total\""},
                          {"\"wrong_elements\"", "\"wrong\""}}) {
    auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  auto back = interprobe::report::parse_report_text(text, "1.x");
  ASSERT_TRUE(back.collective);
  const auto& b = back.collective->allreduce.at(0);
  EXPECT_EQ(b.variant, AllreduceVariant::p2p_off);
  EXPECT_EQ(b.points.at(0).elements_per_rank, 2);
  EXPECT_EQ(b.points.at(0).wrong_elements, 1);
  EXPECT_EQ(b.summary.wrong_elements_total, 1);
}

TEST(CollectiveRules, OneFindingPerCauseListsEverySweep) {
  // Two element types hung the same way: one finding, both sweeps in `affected`.
  Report r;
  r.collective.emplace();
  for (Dtype dtype : {Dtype::float32, Dtype::float16}) {
    auto& s = r.collective->allreduce.emplace_back();
    s.ranks = 8;
    s.dtype = dtype;
    s.status = AllreduceStatus::hung;
    s.hung_at_bytes = 1 << 20;
    s.timeout_s = 60;
  }
  auto findings = interprobe::analysis::derive_findings(r);
  ASSERT_EQ(std::count_if(findings.begin(), findings.end(), [](auto& f) { return f.id == "collective.allreduce_hung"; }), 1);
  const auto& f = findings.front();
  EXPECT_EQ(f.affected, (std::vector<std::string>{"nccl default 8 ranks float", "nccl default 8 ranks half"}));
  EXPECT_EQ(std::get<interprobe::report::ValueList>(f.evidence.at("hung_at_bytes")).size(), 2u);
  EXPECT_NE(f.title.find("2 sweeps"), std::string::npos) << f.title;
}

namespace {
// Four ranks under mpirun: the slowest rank takes 1.5x the mean (the figures the tests below check).
Report four_rank_report(bool with_rank_mean) {
  Report r = header_only_report();
  auto& s = r.collective.emplace().allreduce.emplace_back();
  s.backend = AllreduceBackend::mpi;
  s.ranks = 4;
  for (std::int64_t bytes : {std::int64_t{8}, std::int64_t{1} << 20}) {
    auto& p = s.points.emplace_back();
    p.bytes = bytes;
    p.elements_per_rank = bytes / 4;
    p.samples = 5;
    p.time_us = bytes == 8 ? 30 : 300;
    p.algbw_gbps = static_cast<double>(bytes) / (p.time_us * 1e3);
    p.busbw_gbps = p.algbw_gbps * 1.5;
    if (with_rank_mean) {
      p.rank_mean_time_us = p.time_us / 1.5;
      p.rank_mean_busbw_gbps = p.busbw_gbps * 1.5;
    }
  }
  s.summary = ic::summarize_sweep(s.points);
  return r;
}

// The first line that begins with `start` once its indent and a markdown table's opening pipe are
// left aside (text tables are indented under their section).
std::string line_starting(const std::string& text, const std::string& start) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto from = line.find_first_not_of(" |");
    if (from != std::string::npos && line.compare(from, start.size(), start) == 0) return line;
  }
  return "";
}
}  // namespace

// nccl-tests prints the mean over ranks by default (src/common.cu: `static int average = 1;`): the
// headline is that, labelled, with the slowest rank's time beside it. The stored fields keep the slowest.
TEST(CollectiveReport, HeadlineIsTheMeanOverRanksWithTheSlowestRankBeside) {
  const Report r = four_rank_report(true);
  const auto& s = r.collective->allreduce[0];
  EXPECT_DOUBLE_EQ(*s.summary.latency_us, 30);  // stored: the slowest rank, as before
  for (auto format : {interprobe::render::Format::text, interprobe::render::Format::markdown}) {
    const auto out = interprobe::render::render(r, format, {});
    EXPECT_NE(out.find("mean over ranks, as nccl-tests"), std::string::npos) << out;
    // The column (its header wraps in a narrow text table) and the caption naming it.
    EXPECT_NE(out.find("slowest: the slowest rank's time"), std::string::npos) << out;
    const auto row = line_starting(out, "1M");
    ASSERT_FALSE(row.empty()) << out;
    const auto mean_at = row.find(" " + interprobe::format_us(200) + " ");
    const auto slowest_at = row.find(" " + interprobe::format_us(300) + " ");
    ASSERT_NE(mean_at, std::string::npos) << row;
    ASSERT_NE(slowest_at, std::string::npos) << row;
    EXPECT_LT(mean_at, slowest_at) << row;  // time (the mean) first, then the slowest rank
    // busbw of the mean time: 1 MiB / 200 us x 1.5.
    EXPECT_NE(row.find(interprobe::format_gbps(1048576 / 200e3 * 1.5)), std::string::npos) << row;
    const auto latency = line_starting(out, "latency at 8 B");
    EXPECT_NE(latency.find(interprobe::format_us(20) + " us (mean over ranks, as nccl-tests; slowest rank " +
                           interprobe::format_us(30) + " us)"),
              std::string::npos)
        << out;
  }
}

TEST(CollectiveReport, AReportWithoutTheRankMeanShowsTheSlowestRankLabelled) {
  const auto out = interprobe::render::render(four_rank_report(false), interprobe::render::Format::text, {});
  EXPECT_EQ(out.find("slowest: the slowest rank's time"), std::string::npos) << out;
  EXPECT_EQ(out.find("mean over ranks, as nccl-tests"), std::string::npos) << out;
  EXPECT_NE(line_starting(out, "latency at 8 B").find(interprobe::format_us(30) + " us (slowest rank)"), std::string::npos) << out;
  EXPECT_NE(line_starting(out, "1M").find(" " + interprobe::format_us(300) + " "), std::string::npos) << out;
}

TEST(AllreduceSummary, TheMeanOverRanksSummarizesTheRankMeanFigures) {
  const Report r = four_rank_report(true);
  const auto& points = r.collective->allreduce[0].points;
  const auto mean = interprobe::report::summarize_points(points, interprobe::report::RankAggregate::mean);
  const auto slowest = interprobe::report::summarize_points(points, interprobe::report::RankAggregate::slowest);
  EXPECT_DOUBLE_EQ(*mean.latency_us, 20);
  EXPECT_DOUBLE_EQ(*slowest.latency_us, 30);
  EXPECT_DOUBLE_EQ(*mean.peak_busbw_gbps, 1.5 * *slowest.peak_busbw_gbps);
  const auto headline = interprobe::report::headline_of(points[1]);
  EXPECT_EQ(headline.aggregate, interprobe::report::RankAggregate::mean);
  EXPECT_DOUBLE_EQ(headline.algbw_gbps, 1048576 / 200e3);
}
