// --format prometheus (issue 20 item 3): family and label names derived from the metrics view,
// label values escaped per the exposition format, hostile machine strings, one HELP/TYPE per
// family with its samples together, no timestamps. The CLI test reads whole outputs back with
// prometheus_client's parser (tests/cli/prometheus_cli_test.cpp).
#include <gtest/gtest.h>

#include <array>
#include <regex>
#include <set>
#include <sstream>

#include "report/model/metrics.hpp"
#include "report/render/prometheus.hpp"
#include "report/render/renderers.hpp"

using namespace interprobe;
using render::prometheus_family_name;
using render::prometheus_label_name;

namespace {

report::MetricRow row(std::string path, std::string unit, std::map<std::string, std::string> labels = {}) {
  report::MetricRow r;
  r.path = std::move(path);
  r.unit = std::move(unit);
  r.labels = std::move(labels);
  return r;
}

// A DMI product string and a model name as a hostile machine or config could write them.
const std::string kHostileProduct = "Pro\"duct\\ \"x\"\nline2 \xc3\xa9t\xc3\xa9 \x1b[31m \xff end";
const std::string kHostileModel = "org/evil\"} 1\ninjected_metric 666";

report::Report hostile_report() {
  report::Report r;
  r.tool.version = "0.1.0";
  r.host.started_at = "2026-12-04T10:00:00Z";
  r.probes.push_back({"virtualization", report::ProbeStatus::ok, std::nullopt, 0.25});
  r.probes.push_back({"bandwidth", report::ProbeStatus::failed, std::string("boom"), 1.5});
  r.virtualization = report::VirtSection{};
  r.virtualization->hypervisor = "kvm";
  r.virtualization->machine_type = "q35";
  r.virtualization->product = kHostileProduct;
  r.bandwidth = report::BandwidthSection{};
  report::BandwidthSweep s;
  s.src = "node0";
  s.dst = "node0";
  s.threads = 1;
  s.expected_gbps = 20.0;
  report::BandwidthPoint p;
  p.bytes = 256 << 20;
  p.gbps = 9.5;
  p.median_us = 28256.0;
  s.points.push_back(p);
  r.bandwidth->sweeps.push_back(s);
  r.bandwidth->sweeps.push_back(s);  // a rerun of the same path: "#2" in the view
  r.bottlenecks = report::BottleneckSection{};
  report::WorkloadEstimate w;
  w.model = kHostileModel;
  w.tp = 8;
  report::BatchEstimate b;
  b.batch = 1;
  b.modeled_step_us = 6000;
  b.tokens_per_s = 166.7;
  b.provenance = report::Provenance::interpolated;
  w.batches.push_back(b);
  r.bottlenecks->workloads.push_back(w);
  r.findings.push_back({"virt.machine_type_i440fx", report::Severity::warn, "t", {}, "r", {}});
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST(PrometheusNames, FamiliesCarryTheSectionTheKindAndTheUnit) {
  // view path, unit -> family
  const std::vector<std::array<std::string, 3>> cases{
      {"bandwidth/host/memcpy/node0->node0/x1/256MiB/gbps", "gbps", "interprobe_bandwidth_gbps"},
      {"bandwidth/host/memcpy/node0->node0/x1/256MiB/time_us", "us", "interprobe_bandwidth_time_us"},
      {"bandwidth/cuda/h2d/node0->gpu0/pinned/fit/peak_gbps", "gbps", "interprobe_bandwidth_fit_peak_gbps"},
      {"bandwidth/p2p_truth/gpu0->gpu1/staged_latency_us", "us", "interprobe_bandwidth_staged_latency_us"},
      {"collective/nccl/p2p-off/half/in_place/8B/time_us", "us", "interprobe_allreduce_time_us"},
      {"collective/mpi/half_plateau_bytes", "bytes", "interprobe_allreduce_half_plateau_bytes"},
      {"probes/bandwidth/duration_s", "s", "interprobe_probe_duration_seconds"},
      {"topology/gpus/0/link/current_gts", "gts", "interprobe_topology_gpu_link_current_gts"},
      {"topology/gpus/0/memory_bytes", "bytes", "interprobe_topology_gpu_memory_bytes"},
      {"topology/numa_nodes/0/memory_bytes", "bytes", "interprobe_topology_numa_node_memory_bytes"},
      {"compute/host/peak/fp32/tflops", "tflops", "interprobe_compute_peak_tflops"},
      {"compute/host/fp32/gate_up_tp4/m16/tflops", "tflops", "interprobe_compute_gemm_tflops"},
      {"compute/host/memory/triad/gbps", "gbps", "interprobe_compute_memory_gbps"},
      {"compute/cuda/launch_floor_us", "us", "interprobe_compute_launch_floor_us"},
      {"telemetry/gpu3/power_w", "w", "interprobe_telemetry_gpu_power_watts"},
      {"telemetry/gpu3/sm_active_fraction", "fraction", "interprobe_telemetry_gpu_sm_active_ratio"},
      {"bottlenecks/org_m/tp8/b1/communication_latency_us", "us", "interprobe_bottleneck_communication_latency_us"},
      {"system/logical_cpus", "count", "interprobe_system_logical_cpus"},
      // A second sweep over one path ("#2") is the same family.
      {"bandwidth/host/memcpy/node0->node0/x1/256MiB/gbps#2", "gbps", "interprobe_bandwidth_gbps"},
      // A section this table does not know still gets a valid name.
      {"new-section/a b/rate.x", "gbps", "interprobe_new_section_rate_x"},
  };
  for (const auto& [path, unit, family] : cases) EXPECT_EQ(prometheus_family_name(row(path, unit)), family) << path;
}

TEST(PrometheusNames, LabelNamesAreValidAndNeverReserved) {
  EXPECT_EQ(prometheus_label_name("bytes"), "size_bytes");
  EXPECT_EQ(prometheus_label_name("numa_node"), "numa_node");
  EXPECT_EQ(prometheus_label_name("a-b.c"), "a_b_c");
  EXPECT_EQ(prometheus_label_name("0gpu"), "_0gpu");
  EXPECT_EQ(prometheus_label_name("__name__"), "_name__");
  EXPECT_EQ(prometheus_label_name(""), "_");
  const std::regex valid("[a-zA-Z_][a-zA-Z0-9_]*");
  for (const char* key : {"x\"y", "\n", "é", "__", "9"}) {
    std::string name = prometheus_label_name(key);
    EXPECT_TRUE(std::regex_match(name, valid)) << name;
    EXPECT_NE(name.rfind("__", 0), 0u) << name;
  }
}

TEST(PrometheusNames, LabelValuesKeepUtf8AndShowControls) {
  EXPECT_EQ(render::prometheus_label_value("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93");
  EXPECT_EQ(render::prometheus_label_value("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(render::prometheus_label_value("bad \xff byte"), "bad \\xff byte");
  EXPECT_EQ(render::prometheus_label_value("two\nlines"), "two\nlines");  // the format escapes it
}

TEST(PrometheusFamilies, InfoProbesRowsFindingsInOrderEachSeriesOnce) {
  auto families = render::prometheus_families(hostile_report());
  std::vector<std::string> names;
  for (const auto& f : families) names.push_back(f.name);
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names[0], "interprobe_info");
  EXPECT_EQ(names[1], "interprobe_probe_ok");
  EXPECT_EQ(names.back(), "interprobe_finding");
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << "a family twice";

  for (const auto& f : families) {
    EXPECT_FALSE(f.help.empty()) << f.name;
    EXPECT_EQ(f.help.find("interprobe report metric, unit"), std::string::npos) << f.name << " has no HELP text of its own";
    if (f.name == "interprobe_probe_ok") {
      ASSERT_EQ(f.samples.size(), 2u);
      EXPECT_EQ(f.samples[0].labels.at("probe"), "virtualization");
      EXPECT_EQ(f.samples[0].value, 1);
      EXPECT_EQ(f.samples[1].value, 0);
    }
    if (f.name == "interprobe_bandwidth_gbps") {
      // The rerun is a second series of the family, told apart by `repeat`.
      ASSERT_EQ(f.samples.size(), 2u);
      EXPECT_EQ(f.samples[0].labels.at("size_bytes"), "268435456");
      EXPECT_EQ(f.samples[0].labels.at("path"), "host/memcpy/node0->node0/x1");
      EXPECT_EQ(f.samples[0].labels.count("section"), 0u);
      EXPECT_EQ(f.samples[0].labels.count("repeat"), 0u);
      EXPECT_EQ(f.samples[1].labels.at("repeat"), "2");
    }
    if (f.name == "interprobe_bandwidth_expected_gbps") {
      EXPECT_EQ(f.samples.at(0).labels.at("provenance"), "not_measured");
    }
    if (f.name == "interprobe_bottleneck_tokens_per_s") {
      EXPECT_EQ(f.samples.at(0).labels.at("provenance"), "interpolated");
      EXPECT_EQ(f.samples.at(0).labels.at("model"), kHostileModel);
    }
  }
}

TEST(PrometheusRender, EscapesHostileLabelValuesPerTheFormat) {
  if (!render::prometheus_available()) GTEST_SKIP() << "built without prometheus-cpp";
  std::string text = render::render_prometheus(hostile_report());
  // Product: backslash, quotes and newline escaped; UTF-8 kept; ESC and the stray byte visible.
  EXPECT_NE(text.find("product=\"Pro\\\"duct\\\\ \\\"x\\\"\\nline2 \xc3\xa9t\xc3\xa9 \\\\x1b[31m \\\\xff end\""),
            std::string::npos)
      << text;
  // The model name cannot end the label set or start a line of its own.
  EXPECT_NE(text.find("model=\"org/evil\\\"} 1\\ninjected_metric 666\""), std::string::npos) << text;
  for (const auto& line : lines_of(text)) EXPECT_NE(line.rfind("injected_metric", 0), 0u) << line;
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
}

TEST(PrometheusRender, OneHelpAndTypePerFamilyThenItsSamplesWithoutTimestamps) {
  if (!render::prometheus_available()) GTEST_SKIP() << "built without prometheus-cpp";
  std::string text = render::render(hostile_report(), render::Format::prometheus, {});
  std::set<std::string> finished;
  std::string current;
  // name{labels} value: one number, no timestamp after it.
  const std::regex sample(R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (-?[0-9.e+-]+|[+-]Inf|NaN|Nan))");
  int samples = 0;
  for (const auto& line : lines_of(text)) {
    std::smatch m;
    if (line.rfind("# HELP ", 0) == 0) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(finished.insert(name).second) << "second HELP for " << name;
      current = name;
    } else if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_EQ(line, "# TYPE " + current + " gauge");
    } else {
      ASSERT_TRUE(std::regex_match(line, m, sample)) << line;
      EXPECT_EQ(m[1].str(), current) << "sample outside its family: " << line;
      ++samples;
    }
  }
  EXPECT_GT(samples, 8);
  EXPECT_NE(text.find("interprobe_finding{id=\"virt.machine_type_i440fx\",severity=\"warn\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("interprobe_probe_ok{probe=\"bandwidth\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("interprobe_info{constructed=\"false\",container=\"none\",hypervisor=\"kvm\",live=\"true\",machine_type=\"q35\","),
            std::string::npos)
      << text;
}
