// The HTML report's chart kit and page: ticks on log axes, escaping of machine strings in text and
// attributes, a data table beside every chart, labels on numbers that were not measured.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "report/render/html/html.hpp"
#include "report/render/renderers.hpp"

using namespace interprobe;
using namespace interprobe::render::html;

namespace {

const std::string kHostile = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>";

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) ++n;
  return n;
}

report::Report report_with_curves() {
  report::Report r;
  r.tool.version = "0.1.0";
  r.host.hostname = "node" + kHostile;
  r.probes.push_back({"bandwidth", report::ProbeStatus::ok, std::nullopt, 1});
  report::BandwidthSection bw;
  report::BandwidthSweep s;
  s.src = "node0" + kHostile;
  s.dst = "node0";
  s.expected_gbps = 20;
  s.expected_basis = "DDR5 x2";
  for (std::int64_t bytes = 8; bytes <= (1 << 20); bytes *= 8)
    s.points.push_back({.bytes = bytes, .samples = 10, .median_us = 1 + bytes / 1e4, .cv_fraction = 0.02,
                        .gbps = static_cast<double>(bytes) / (1e3 * (1 + bytes / 1e4))});
  bw.sweeps.push_back(s);
  r.bandwidth = bw;
  report::BottleneckSection bn;
  report::WorkloadEstimate w;
  w.model = "m" + kHostile;
  w.verdict = "communication latency limits batch 1";
  report::BatchEstimate b;
  b.batch = 1;
  b.modeled_step_us = 1500;
  b.categories = {{report::StepCategory::communication_latency, 1000.0, report::Provenance::interpolated},
                  {report::StepCategory::gemm_memory_bound, 500.0, report::Provenance::measured}};
  w.batches.push_back(b);
  bn.workloads.push_back(w);
  r.bottlenecks = bn;
  return r;
}

}  // namespace

TEST(HtmlCharts, LogTicksFollowOneTwoFiveAndPowersOfTwo) {
  EXPECT_EQ(log_ticks(1, 100, false), (std::vector<double>{1, 2, 5, 10, 20, 50, 100}));
  auto wide = log_ticks(0.01, 1e6, false);  // 8 decades: powers of ten only
  for (double t : wide) EXPECT_NEAR(std::log10(t), std::round(std::log10(t)), 1e-9) << t;
  EXPECT_LE(wide.size(), 9u);
  auto bytes = log_ticks(8, 1 << 30, true);
  ASSERT_FALSE(bytes.empty());
  EXPECT_LE(bytes.size(), 10u);
  for (double t : bytes) EXPECT_EQ(std::exp2(std::round(std::log2(t))), t);
  EXPECT_TRUE(log_ticks(0, 10, false).empty());  // no log axis through zero
}

TEST(HtmlCharts, EscapesTextAndAttributes) {
  EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(html_escape("bell\x07"), "bell\\x07");
  LineChart c{"id\"x", "title" + kHostile, {"size", Scale::log_bytes}, {"GB/s", Scale::log}, {}, {}};
  c.series.push_back({"s" + kHostile, {{8, 1, 0.9, 1.1, "note" + kHostile}, {64, 2, {}, {}, ""}}, false});
  std::string out = svg(c) + data_table(c);
  EXPECT_EQ(out.find("<script"), std::string::npos);
  EXPECT_EQ(out.find("<img"), std::string::npos);
  EXPECT_EQ(out.find("id\"x"), std::string::npos);
  EXPECT_NE(out.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(out.find("class=\"band\""), std::string::npos);  // the interval at 8 B is drawn
}

TEST(HtmlPage, EveryChartHasItsTableAndUnmeasuredNumbersAreLabelled) {
  std::string page = render::render_html(report_with_curves());
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(count(page, "<svg"), count(page, "<table class=\"data\""));
  EXPECT_GE(count(page, "<svg"), 3u);  // GB/s and time per size, the step breakdown
  EXPECT_NE(page.find("Bandwidth vs size"), std::string::npos);
  EXPECT_NE(page.find("expected 20.0 GB/s (DDR5 x2)"), std::string::npos);  // dashed reference, named as such
  EXPECT_NE(page.find("1.00 ms (interpolated)"), std::string::npos);
  EXPECT_NE(page.find("class=\"verdict\""), std::string::npos);
  // The verdict block comes before the chart it heads.
  EXPECT_LT(page.find("communication latency limits batch 1"), page.find("decode step by category"));
}

TEST(HtmlPage, ReportWithoutCurvesHasNoChart) {
  report::Report r;
  r.tool.version = "0.1.0";
  std::string page = render::render_html(r);
  EXPECT_EQ(count(page, "<svg"), 0u);
  EXPECT_NE(page.find("<h2>findings</h2>"), std::string::npos);
}
