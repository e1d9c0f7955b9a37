// --format prometheus (issue 20 item 3): family and label names derived from the metrics view,
// label values escaped per the exposition format, hostile machine strings, one HELP/TYPE per
// family with its samples together, no timestamps. The CLI test reads whole outputs back with
// prometheus_client's parser (tests/cli/prometheus_cli_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "model/json.hpp"
#include "model/metrics.hpp"
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
  b.bottleneck = report::StepCategory::communication_latency;
  b.categories.push_back({report::StepCategory::communication_latency, 4000.0, report::Provenance::measured});
  b.categories.push_back({report::StepCategory::gemm_memory_bound, 2000.0, report::Provenance::assumed});
  w.batches.push_back(b);
  r.bottlenecks->workloads.push_back(w);
  r.findings.push_back({"virt.machine_type_i440fx", report::Severity::warn, "t", {}, "r", {}});
  // Two GPUs: NVML says P2P read OK and write not supported; the copies found the pair staged.
  r.topology = report::TopologySection{};
  report::GpuPair pair;
  pair.a_index = 0;
  pair.b_index = 1;
  pair.path = "NV4";
  pair.nvlink_count = 4;
  pair.p2p = report::P2pStatus{report::P2pCapability::ok, report::P2pCapability::not_supported, std::nullopt, std::nullopt};
  r.topology->gpu_pairs.push_back(pair);
  report::P2pPairTruth truth;
  truth.src = "gpu0";
  truth.dst = "gpu1";
  truth.truth = report::P2pTruth::staged;
  truth.staged_gbps = 12.5;
  truth.staged_latency_us = 9.0;
  r.bandwidth->p2p_pairs.push_back(truth);
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
  // the row's family and figure (metrics.cpp sets them), unit -> Prometheus family
  const std::vector<std::array<std::string, 4>> cases{
      {"bandwidth", "gbps", "gbps", "interprobe_bandwidth_bytes_per_second"},
      {"bandwidth", "time_us", "us", "interprobe_bandwidth_time_seconds"},
      {"bandwidth_fit", "peak_gbps", "gbps", "interprobe_bandwidth_fit_peak_bytes_per_second"},
      {"bandwidth_fit", "t0_us", "us", "interprobe_bandwidth_fit_t0_seconds"},
      {"bandwidth", "cpu_clock_ghz", "ghz", "interprobe_bandwidth_cpu_clock_hertz"},
      {"p2p", "p2p_gbps", "gbps", "interprobe_p2p_peer_bandwidth_bytes_per_second"},
      {"p2p", "staged_latency_us", "us", "interprobe_p2p_staged_latency_seconds"},
      {"allreduce", "time_us", "us", "interprobe_allreduce_time_seconds"},
      {"allreduce", "half_plateau_bytes", "bytes", "interprobe_allreduce_half_plateau_bytes"},
      {"probe", "duration_s", "s", "interprobe_probe_duration_seconds"},
      {"topology_gpu_link", "current_gts", "gts", "interprobe_topology_gpu_link_current_transfers_per_second"},
      {"topology_gpu", "memory_bytes", "bytes", "interprobe_topology_gpu_memory_bytes"},
      {"topology_gpu_pair", "nvlink_count", "count", "interprobe_topology_gpu_pair_nvlinks"},
      {"topology_numa_node", "memory_bytes", "bytes", "interprobe_topology_numa_node_memory_bytes"},
      {"compute_peak", "tflops", "tflops", "interprobe_compute_peak_floating_point_operations_per_second"},
      {"compute_gemm", "tflops", "tflops", "interprobe_compute_gemm_floating_point_operations_per_second"},
      {"compute_memory", "gbps", "gbps", "interprobe_compute_memory_bytes_per_second"},
      {"compute", "launch_floor_us", "us", "interprobe_compute_launch_floor_seconds"},
      {"telemetry_gpu", "power_w", "w", "interprobe_telemetry_gpu_power_watts"},
      {"telemetry_gpu", "sm_active_fraction", "fraction", "interprobe_telemetry_gpu_sm_active_ratio"},
      {"bottleneck", "tokens_per_s", "tokens_per_s", "interprobe_bottleneck_tokens_per_second"},
      // Every step category is one family; the category is the `part` label.
      {"bottleneck", "communication_latency_us", "us", "interprobe_bottleneck_part_seconds"},
      {"bottleneck", "gemm_memory_bound_us", "us", "interprobe_bottleneck_part_seconds"},
      {"bottleneck", "modeled_step_us", "us", "interprobe_bottleneck_modeled_step_seconds"},
      {"system", "logical_cpus", "count", "interprobe_system_logical_cpus"},
      // A family this table does not know still gets a valid name.
      {"new-section", "rate.x", "gbps", "interprobe_new_section_rate_x"},
  };
  for (const auto& [family, leaf, unit, name] : cases) {
    report::MetricRow r = row("x/y", unit);
    r.section = family == "bottleneck" ? "bottlenecks" : family;
    r.family = family;
    r.leaf = leaf;
    EXPECT_EQ(prometheus_family_name(r), name) << family << " " << leaf;
  }
}

// The rows of a report carry the family their section and kind give them: the view's paths, the
// families the exporter names (a second sweep over one path, "#2", is the same family).
TEST(PrometheusNames, EveryRowOfASavedReportHasTheFamilyOfItsKind) {
  auto r = report::read_report_file(std::string(INTERPROBE_SOURCE_DIR) + "/examples/reports/this-vm-run.json");
  ASSERT_TRUE(r.bandwidth && !r.bandwidth->sweeps.empty() && r.collective);
  r.bandwidth->sweeps.push_back(r.bandwidth->sweeps.front());
  std::map<std::string, std::string> family_of;
  for (const auto& m : report::metrics_of(r)) family_of[m.path] = prometheus_family_name(m);
  ASSERT_FALSE(family_of.empty());
  std::size_t checked = 0;
  for (const auto& [path, name] : family_of) {
    std::string expected;
    if (path.rfind("probes/", 0) == 0) expected = "interprobe_probe_duration_seconds";
    else if (path.find("/fit/peak_gbps") != std::string::npos) expected = "interprobe_bandwidth_fit_peak_bytes_per_second";
    else if (path.rfind("bandwidth/", 0) == 0 && path.find("/gbps") != std::string::npos) expected = "interprobe_bandwidth_bytes_per_second";
    else if (path.rfind("collective/", 0) == 0 && path.find("/time_us") != std::string::npos) expected = "interprobe_allreduce_time_seconds";
    else continue;
    EXPECT_EQ(name, expected) << path;
    ++checked;
  }
  EXPECT_GT(checked, 20u);
  EXPECT_TRUE(std::any_of(family_of.begin(), family_of.end(), [](const auto& e) { return e.first.find("#2") != std::string::npos; }));
}

// Issue 36: the name says the base unit, so the value is in it (promtool: "should not contain
// abbreviated units"; the old names were _gbps, _us, _gts, _tflops with the report's numbers).
TEST(PrometheusNames, ValuesAreInTheBaseUnitTheNameSays) {
  auto value = [](double v, const std::string& unit) {
    report::MetricRow r = row("x/y", unit);
    r.value = v;
    return render::prometheus_value(r);
  };
  EXPECT_DOUBLE_EQ(value(9.5, "gbps"), 9.5e9);
  EXPECT_EQ(value(28256, "us"), 0.028256);  // divided, not multiplied by 1e-6: the decimal prints as written
  EXPECT_DOUBLE_EQ(value(2.5, "s"), 2.5);
  EXPECT_DOUBLE_EQ(value(16, "gts"), 16e9);
  EXPECT_DOUBLE_EQ(value(4.5, "ghz"), 4.5e9);
  EXPECT_DOUBLE_EQ(value(989.5, "tflops"), 989.5e12);
  EXPECT_DOUBLE_EQ(value(0.25, "fraction"), 0.25);
  EXPECT_DOUBLE_EQ(value(7, "count"), 7);
  EXPECT_DOUBLE_EQ(value(3, "a-unit-from-later"), 3);  // unknown units are left as they are
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
  EXPECT_EQ(names[1], "interprobe_report_timestamp_seconds");
  EXPECT_EQ(names[2], "interprobe_probe_ok");
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
    if (f.name == "interprobe_bandwidth_bytes_per_second") {
      // The rerun is a second series of the family, told apart by `repeat`.
      ASSERT_EQ(f.samples.size(), 2u);
      EXPECT_EQ(f.samples[0].labels.at("size_bytes"), "268435456");
      EXPECT_EQ(f.samples[0].labels.at("path"), "host/memcpy/node0->node0/x1");
      EXPECT_EQ(f.samples[0].labels.count("section"), 0u);
      EXPECT_EQ(f.samples[0].labels.count("repeat"), 0u);
      EXPECT_EQ(f.samples[1].labels.at("repeat"), "2");
    }
    if (f.name == "interprobe_bandwidth_expected_bytes_per_second") {
      EXPECT_EQ(f.samples.at(0).labels.at("provenance"), "not_measured");
    }
    if (f.name == "interprobe_bottleneck_tokens_per_second") {
      EXPECT_EQ(f.samples.at(0).labels.at("model"), kHostileModel);
      EXPECT_EQ(f.samples.at(0).labels.count("provenance"), 0u) << "a verdict, in interprobe_bottleneck_provenance";
    }
  }
}

const render::PrometheusFamily* family_named(const std::vector<render::PrometheusFamily>& families, const std::string& name) {
  for (const auto& f : families)
    if (f.name == name) return &f;
  return nullptr;
}

// Issue 36: the bottleneck, its provenance, the P2P verdict were labels of the numbers, so every
// change of them started a new series; now each is a state set and the numbers keep their series.
TEST(PrometheusFamilies, VerdictsAreStateSetsBesideNumbersWithStableLabels) {
  auto families = render::prometheus_families(hostile_report());
  const auto* parts = family_named(families, "interprobe_bottleneck_part_seconds");
  ASSERT_NE(parts, nullptr);
  ASSERT_EQ(parts->samples.size(), 2u);
  EXPECT_EQ(parts->samples[0].labels.at("part"), "communication_latency");
  EXPECT_DOUBLE_EQ(parts->samples[0].value, 0.004);
  const std::set<std::string> state_sets{"interprobe_probe_status", "interprobe_p2p_truth", "interprobe_compute_gemm_bound",
                                         "interprobe_telemetry_gpu_class", "interprobe_bottleneck_dominant",
                                         "interprobe_bottleneck_provenance"};
  for (const auto& f : families) {
    if (state_sets.count(f.name)) continue;
    for (const auto& s : f.samples)
      for (const char* verdict : {"bottleneck", "truth", "bound", "class", "rule", "status"})
        EXPECT_EQ(s.labels.count(verdict), 0u) << f.name << " has " << verdict;
  }

  const auto* dominant = family_named(families, "interprobe_bottleneck_dominant");
  ASSERT_NE(dominant, nullptr);
  ASSERT_EQ(dominant->samples.size(), 6u) << "one series per step category";
  for (const auto& s : dominant->samples) {
    EXPECT_EQ(s.labels.at("model"), kHostileModel);
    EXPECT_EQ(s.value, s.labels.at("part") == "communication_latency" ? 1 : 0) << s.labels.at("part");
  }
  const auto* provenance = family_named(families, "interprobe_bottleneck_provenance");
  ASSERT_NE(provenance, nullptr);
  ASSERT_EQ(provenance->samples.size(), 3u * 5u) << "step and two parts, five provenances each";
  std::set<std::string> ones;
  for (const auto& s : provenance->samples)
    if (s.value == 1) ones.insert(s.labels.at("part") + "=" + s.labels.at("provenance"));
  EXPECT_EQ(ones, (std::set<std::string>{"step=interpolated", "communication_latency=measured", "gemm_memory_bound=assumed"}));

  const auto* truth = family_named(families, "interprobe_p2p_truth");
  ASSERT_NE(truth, nullptr);
  ASSERT_EQ(truth->samples.size(), 4u);
  for (const auto& s : truth->samples) EXPECT_EQ(s.value, s.labels.at("truth") == "staged" ? 1 : 0);
  const auto* status = family_named(families, "interprobe_probe_status");
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->samples.size(), 2u * 4u);
}

TEST(PrometheusFamilies, P2pPairsHaveSupportGaugesAndTheirMeasuredBandwidth) {
  auto families = render::prometheus_families(hostile_report());
  const auto* supported = family_named(families, "interprobe_p2p_supported");
  ASSERT_NE(supported, nullptr);
  ASSERT_EQ(supported->samples.size(), 2u) << "read and write; NVML gave no atomics or nvlink status";
  EXPECT_EQ(supported->samples[0].labels, (std::map<std::string, std::string>{{"gpu_a", "0"}, {"gpu_b", "1"}, {"kind", "read"}}));
  EXPECT_EQ(supported->samples[0].value, 1);
  EXPECT_EQ(supported->samples[1].labels.at("kind"), "write");
  EXPECT_EQ(supported->samples[1].value, 0);
  const auto* staged = family_named(families, "interprobe_p2p_staged_bandwidth_bytes_per_second");
  ASSERT_NE(staged, nullptr);
  EXPECT_EQ(staged->samples.at(0).labels, (std::map<std::string, std::string>{{"dst", "gpu1"}, {"src", "gpu0"}}));
  EXPECT_DOUBLE_EQ(staged->samples.at(0).value, 12.5e9);
  EXPECT_EQ(family_named(families, "interprobe_p2p_peer_bandwidth_bytes_per_second"), nullptr) << "not measured: no series";
  // The pair's NVLink count is a gauge; the nvidia-smi label "NV4" that holds it is not a label.
  const auto* nvlinks = family_named(families, "interprobe_topology_gpu_pair_nvlinks");
  ASSERT_NE(nvlinks, nullptr);
  EXPECT_EQ(nvlinks->samples.at(0).labels.count("path"), 0u);
  EXPECT_EQ(nvlinks->samples.at(0).labels.at("pcie_path"), "unknown");
}

// Re-rendering a saved report must not look like a fresh measurement.
TEST(PrometheusFamilies, TheTimestampIsWhenTheReportWasMeasured) {
  EXPECT_EQ(render::prometheus_epoch_seconds("2026-12-04T10:00:00Z"), 1796378400.0);
  EXPECT_EQ(render::prometheus_epoch_seconds("2026-12-04T10:00:00.25Z"), 1796378400.25);
  EXPECT_EQ(render::prometheus_epoch_seconds("2026-12-04 10:00"), std::nullopt);
  EXPECT_EQ(render::prometheus_epoch_seconds("2026-12-04T10:00:00+01:00"), std::nullopt);
  auto families = render::prometheus_families(hostile_report());
  const auto* stamp = family_named(families, "interprobe_report_timestamp_seconds");
  ASSERT_NE(stamp, nullptr);
  ASSERT_EQ(stamp->samples.size(), 1u);
  EXPECT_EQ(stamp->samples[0].value, 1796378400.0);
  EXPECT_TRUE(stamp->samples[0].labels.empty());
  auto unstamped = hostile_report();
  unstamped.host.started_at = "yesterday";
  EXPECT_EQ(family_named(render::prometheus_families(unstamped), "interprobe_report_timestamp_seconds"), nullptr)
      << "no time is better than a made-up one";
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
