// Evaluation: thresholds, relative thresholds, quantifiers, facts, findings, the bottleneck
// verdict, and "not measured" as skipped (never passed); outputs escape machine strings.
#include <gtest/gtest.h>

#include "common/errors.hpp"
#include "report/policy/check.hpp"
#include "report/policy/check_output.hpp"
#include "report/policy/policy.hpp"

using namespace interprobe;
using namespace interprobe::policy;

namespace {

report::Report two_gpu_report() {
  report::Report r;
  r.probes.push_back({"topology", report::ProbeStatus::ok, std::nullopt, 0.1});
  r.probes.push_back({"virtualization", report::ProbeStatus::ok, std::nullopt, 0.1});
  r.probes.push_back({"bandwidth", report::ProbeStatus::unsupported, std::string("no CUDA driver"), 0.0});
  report::TopologySection t;
  for (int i = 0; i < 2; ++i) {
    report::Gpu g;
    g.index = i;
    g.bdf = "0000:0" + std::to_string(i + 1) + ":00.0";
    if (i == 0) g.numa_node = 0;  // the second GPU's locality is hidden
    t.gpus.push_back(g);
    report::PciDevice d;
    d.bdf = g.bdf;
    d.link.current_gts = i == 0 ? 32.0 : 16.0;
    d.link.downtrained = i == 1;
    t.pci_devices.push_back(d);
  }
  r.topology = t;
  report::VirtSection v;
  v.hypervisor = "kvm";
  v.machine_type = "q35";
  r.virtualization = v;
  report::Finding f;
  f.id = "virt.p2p_clique_missing";
  f.severity = report::Severity::warn;
  f.title = "P2P will be disabled <script>";
  r.findings.push_back(f);
  return r;
}

ItemResult only(const std::string& item, const report::Report& r) {
  auto p = parse_policy(R"({"name": "t", "items": [)" + item + "]}", "t.json");
  return check_report(p, r).items.front();
}

}  // namespace

TEST(PolicyCheck, MetricAbsoluteThresholdOverEverySubject) {
  auto r = two_gpu_report();
  auto all = only(R"({"id": "gen5", "severity": "fail", "metric": "topology/gpus/*/link/current_gts", "op": ">=", "value": 32})", r);
  EXPECT_EQ(all.outcome, Outcome::fail);
  EXPECT_EQ(all.value, "1 of 2 pass");
  EXPECT_NE(all.detail.find("topology/gpus/1/link/current_gts = 16 gts"), std::string::npos) << all.detail;
  auto any = only(R"({"id": "gen5", "severity": "warn", "metric": "topology/gpus/*/link/current_gts", "op": ">=", "value": 32, "for": "any"})", r);
  EXPECT_EQ(any.outcome, Outcome::pass);
  auto warn = only(R"({"id": "gen5", "severity": "warn", "metric": "topology/gpus/1/link/current_gts", "op": ">", "value": 16})", r);
  EXPECT_EQ(warn.outcome, Outcome::warn);
  EXPECT_EQ(warn.value, "16 gts");
  EXPECT_EQ(warn.threshold, "> 16 gts");
}

TEST(PolicyCheck, RelativeThresholdUsesTheMatchingRow) {
  auto r = two_gpu_report();
  // GPU 1 against GPU 0's link: 16 >= 0.5 x 32.
  auto half = only(R"({"id": "rel", "severity": "fail", "metric": "topology/gpus/1/link/current_gts", "op": ">=",
                      "of": "topology/gpus/0/link/current_gts", "factor": 0.5})", r);
  EXPECT_EQ(half.outcome, Outcome::pass);
  EXPECT_NE(half.threshold.find("16 gts"), std::string::npos) << half.threshold;
  auto captured = only(R"({"id": "rel", "severity": "fail", "metric": "topology/gpus/*/link/current_gts", "op": ">=",
                          "of": "topology/gpus/{1}/link/max_gts"})", r);
  EXPECT_EQ(captured.outcome, Outcome::skipped);  // no max_gts in this report: not measured
  EXPECT_NE(captured.detail.find("topology/gpus/0/link/max_gts"), std::string::npos) << captured.detail;
}

TEST(PolicyCheck, WhatTheReportLacksIsSkippedWithTheProbesReason) {
  auto r = two_gpu_report();
  auto h2d = only(R"({"id": "h2d", "severity": "fail", "metric": "bandwidth/cuda/h2d/**/fit/peak_gbps", "op": ">=", "value": 48})", r);
  EXPECT_EQ(h2d.outcome, Outcome::skipped);
  EXPECT_EQ(h2d.value, "not measured");
  EXPECT_NE(h2d.detail.find("bandwidth probe was unsupported: no CUDA driver"), std::string::npos) << h2d.detail;
  auto lat = only(R"({"id": "lat", "severity": "fail", "metric": "collective/nccl/8B/time_us", "op": "<=", "value": 30})", r);
  EXPECT_EQ(lat.outcome, Outcome::skipped);
  EXPECT_NE(lat.detail.find("collective probe did not run"), std::string::npos) << lat.detail;
  // A finding over a probe that did not run is not judged either: absence there means nothing.
  auto nccl = only(R"({"id": "ar", "severity": "fail", "finding": "collective.allreduce_wrong"})", r);
  EXPECT_EQ(nccl.outcome, Outcome::skipped);
  auto verdict = only(R"({"id": "v", "severity": "warn", "bottleneck": "communication", "op": "!=", "batch": 64})", r);
  EXPECT_EQ(verdict.outcome, Outcome::skipped);
  EXPECT_NE(verdict.detail.find("no bottleneck ranking"), std::string::npos);
}

TEST(PolicyCheck, FactsCompareWordsTruthValuesAndNumbers) {
  auto r = two_gpu_report();
  EXPECT_EQ(only(R"({"id": "q", "severity": "fail", "fact": "virtualization/machine_type", "op": "==", "value": "q35"})", r).outcome,
            Outcome::pass);
  EXPECT_EQ(only(R"({"id": "q", "severity": "fail", "fact": "virtualization/machine_type", "op": "!=", "value": "q35"})", r).outcome,
            Outcome::fail);
  auto numa = only(R"({"id": "n", "severity": "warn", "fact": "topology/gpus/*/numa_exposed", "op": "==", "value": true})", r);
  EXPECT_EQ(numa.outcome, Outcome::warn);
  EXPECT_NE(numa.detail.find("topology/gpus/1/numa_exposed = false"), std::string::npos) << numa.detail;
  auto trained = only(R"({"id": "d", "severity": "fail", "fact": "topology/gpus/*/link_downtrained", "op": "==", "value": false})", r);
  EXPECT_EQ(trained.outcome, Outcome::fail);
  EXPECT_EQ(only(R"({"id": "c", "severity": "fail", "fact": "topology/gpu_count", "op": ">=", "value": 2})", r).outcome, Outcome::pass);
  // A word compared with a number is the policy's mistake: exit 2 naming the item and key.
  try {
    only(R"({"id": "m", "severity": "fail", "fact": "virtualization/machine_type", "op": "==", "value": 35})", r);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("item 1 (id \"m\"): key \"value\""), std::string::npos) << e.what();
  }
}

TEST(PolicyCheck, FindingsAbsentOrPresent) {
  auto r = two_gpu_report();
  auto clique = only(R"({"id": "c", "severity": "fail", "finding": "virt.p2p_clique_missing", "expect": "absent"})", r);
  EXPECT_EQ(clique.outcome, Outcome::fail);
  EXPECT_NE(clique.detail.find("P2P will be disabled"), std::string::npos);
  EXPECT_EQ(only(R"({"id": "c", "severity": "fail", "finding": "virt.*", "expect": "present"})", r).outcome, Outcome::pass);
  EXPECT_EQ(only(R"({"id": "c", "severity": "fail", "finding": "virt.vgpu"})", r).outcome, Outcome::pass);
  // Without root the clique is not read: its absence is not a pass.
  r.findings.front().id = "virt.p2p_clique_unchecked";
  auto unread = only(R"({"id": "c", "severity": "fail", "finding": "virt.p2p_clique_missing"})", r);
  EXPECT_EQ(unread.outcome, Outcome::skipped);
  EXPECT_NE(unread.detail.find("virt.p2p_clique_unchecked"), std::string::npos) << unread.detail;
}

TEST(PolicyCheck, BottleneckVerdictByFamilyAtABatch) {
  auto r = two_gpu_report();
  report::BottleneckSection b;
  report::WorkloadEstimate w;
  w.model = "org/model";
  w.tp = 8;
  for (std::int64_t batch : {1, 64}) {
    report::BatchEstimate e;
    e.batch = batch;
    e.bottleneck = batch == 1 ? report::StepCategory::communication_latency : report::StepCategory::gemm_memory_bound;
    w.batches.push_back(e);
  }
  b.workloads.push_back(w);
  r.bottlenecks = b;
  EXPECT_EQ(only(R"({"id": "v", "severity": "fail", "bottleneck": "communication", "op": "!=", "batch": 64})", r).outcome, Outcome::pass);
  EXPECT_EQ(only(R"({"id": "v", "severity": "fail", "bottleneck": "communication", "op": "!=", "batch": 1})", r).outcome, Outcome::fail);
  EXPECT_EQ(only(R"({"id": "v", "severity": "fail", "bottleneck": "gemm_memory_bound", "op": "==", "batch": 64, "tp": 8})", r).outcome,
            Outcome::pass);
  EXPECT_EQ(only(R"({"id": "v", "severity": "fail", "bottleneck": "gemm", "op": "==", "batch": 64, "tp": 4})", r).outcome,
            Outcome::skipped);
}

TEST(PolicyCheck, SummaryAndGateFollowSeverityAndFailOn) {
  auto r = two_gpu_report();
  auto p = parse_policy(R"({"name": "t", "items": [
    {"id": "q", "severity": "fail", "fact": "virtualization/machine_type", "op": "==", "value": "q35"},
    {"id": "n", "severity": "warn", "fact": "topology/gpus/*/numa_exposed", "op": "==", "value": true},
    {"id": "l", "severity": "fail", "metric": "collective/nccl/8B/time_us", "op": "<=", "value": 30}]})",
                        "t.json");
  auto c = check_report(p, r);
  EXPECT_EQ(c.summary.pass, 1);
  EXPECT_EQ(c.summary.warn, 1);
  EXPECT_EQ(c.summary.skipped, 1);
  EXPECT_FALSE(check_failed(c, false));
  EXPECT_TRUE(check_failed(c, true));
  std::string junit = check_junit(c, true);
  EXPECT_NE(junit.find("failures=\"1\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("<skipped message=\"not measured: "), std::string::npos) << junit;
  EXPECT_EQ(check_junit(c, false).find("<failure"), std::string::npos);
}

TEST(PolicyCheck, MachineStringsAreEscapedInJunit) {
  EXPECT_EQ(escape_xml("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
  std::string escaped = escape_xml(std::string("x\x1b[31m\x01y"));
  EXPECT_EQ(escaped.find('\x1b'), std::string::npos);
  EXPECT_EQ(escaped.find('\x01'), std::string::npos);
  auto r = two_gpu_report();
  auto p = parse_policy(R"({"name": "t", "items": [{"id": "c", "severity": "fail", "finding": "virt.p2p_clique_missing"}]})", "t.json");
  std::string junit = check_junit(check_report(p, r), false);
  EXPECT_EQ(junit.find("<script>"), std::string::npos);
  EXPECT_NE(junit.find("&lt;script&gt;"), std::string::npos);
}
