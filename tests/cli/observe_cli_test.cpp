// `interprobe observe` end to end: --replay on the recorded traces (no GPU), live sampling against
// the simulated libnvidia-ml (tests/sim), record then replay, exit 4 without NVML, bad input exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "model/json.hpp"
#include "support/run_binary.hpp"
#include "support/schema_check.hpp"
#include "support/temp_tree.hpp"

using interprobe::testing::run_interprobe;
namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& name) { return std::string(INTERPROBE_FIXTURES) + "/telemetry/" + name + ".json"; }

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> sim_env() {
  return {std::string("INTERPROBE_NVML_LIB=") + INTERPROBE_SIM_NVML,
          std::string("INTERPROBE_SIM_CONFIG=") + INTERPROBE_SIM_DEVICES + "/rtx-pro-6000-8x-kvm-p2p-off.json"};
}

// The HGX H100 description cut to two GPUs, busy at a constant utilization, with `nvml` keys
// replaced, written into `tree`; the environment that points interprobe at it.
std::vector<std::string> busy_h100_env(const interprobe::testing::TempTree& tree, const nlohmann::json& nvml) {
  auto d = nlohmann::json::parse(read_text(std::string(INTERPROBE_SIM_DEVICES) + "/h100-sxm-8x-nvswitch.json"));
  d["devices"] = nlohmann::json::array({d["devices"][0], d["devices"][1]});
  d["nvml"]["busy_percent"] = 100;
  for (const auto& [key, value] : nvml.items()) d["nvml"][key] = value;
  auto path = tree.path() / "h100-busy.json";
  std::ofstream(path) << d.dump();
  return {std::string("INTERPROBE_NVML_LIB=") + INTERPROBE_SIM_NVML, "INTERPROBE_SIM_CONFIG=" + path.string()};
}

interprobe::report::Report observe_live(const interprobe::testing::TempTree& tree, const std::vector<std::string>& env) {
  auto out = tree.path() / "observe.json";
  auto p = run_interprobe({"observe", "--duration", "1.5s", "--interval", "100ms", "--window", "1s", "-o", out.string(), "-q"}, env);
  EXPECT_EQ(p.exit_code, 0) << p.err;
  interprobe::testing::expect_schema_valid(out);
  return interprobe::report::parse_report_text(read_text(out), out.string());
}

}  // namespace

TEST(ObserveCli, ReplayOfEveryFixtureGivesItsClassAndAValidReport) {
  const std::pair<const char*, const char*> cases[] = {
      {"seed_no_gpm", "undecided"}, {"seed_gpm_small_kernel", "small_kernel_launch_bound"}, {"seed_gpm_memory", "memory_bound"},
      {"idle", "idle"}, {"thermal", "thermal_limited"}, {"power_capped", "power_capped"}, {"interconnect", "interconnect_bound"},
      {"host_starved", "host_starved"}, {"compute_bound", "compute_bound"}, {"latency_bound", "latency_occupancy_bound"}};
  interprobe::testing::TempTree tree;
  for (const auto& [name, expected] : cases) {
    auto out = tree.path() / (std::string(name) + ".report.json");
    auto p = run_interprobe({"observe", "--replay", fixture(name), "-o", out.string(), "-q"});
    ASSERT_EQ(p.exit_code, 0) << name << ": " << p.err;
    auto r = interprobe::report::parse_report_text(read_text(out), out.string());
    ASSERT_TRUE(r.telemetry) << name;
    EXPECT_EQ(r.telemetry->source, interprobe::report::TelemetrySource::replay);
    ASSERT_EQ(r.telemetry->gpus.size(), 2u);
    for (const auto& g : r.telemetry->gpus) EXPECT_STREQ(to_string(g.overall.classification), expected) << name << ": " << g.overall.reason;
    interprobe::testing::expect_schema_valid(out);
  }
}

TEST(ObserveCli, SeedReplayTextSaysWhatWouldDecideIt) {
  auto p = run_interprobe({"observe", "--replay", fixture("seed_no_gpm"), "--no-color"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("undecided"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("communication/synchronization or small-kernel/launch-bound"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("interprobe compute --model"), std::string::npos) << p.out;
  EXPECT_EQ(p.out.find("compute_bound"), std::string::npos) << "never compute-bound from utilization and power";
}

TEST(ObserveCli, LiveAgainstTheSimulatedNvmlRecordsAndReplaysTheSameClasses) {
  interprobe::testing::TempTree tree;
  auto report = tree.path() / "live.json";
  auto trace = tree.path() / "trace.json";
  auto p = run_interprobe({"observe", "--duration", "1s", "--interval", "100ms", "--window", "1s", "--record", trace.string(), "-o",
                           report.string(), "-q"},
                          sim_env());
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = interprobe::report::parse_report_text(read_text(report), report.string());
  ASSERT_TRUE(r.telemetry);
  EXPECT_EQ(r.telemetry->source, interprobe::report::TelemetrySource::simulated);
  ASSERT_EQ(r.telemetry->gpus.size(), 8u);
  EXPECT_GE(r.telemetry->samples, 8 * 9) << "about 11 ticks in 1 s at 100 ms";
  const auto& g = r.telemetry->gpus[0];
  // The description's power curve: the limit is its max_power_w, the draw at least its idle_power_w.
  auto description = nlohmann::json::parse(read_text(std::string(INTERPROBE_SIM_DEVICES) + "/rtx-pro-6000-8x-kvm-p2p-off.json"));
  double max_w = description.at("nvml").at("max_power_w").get<double>(), idle_w = description.at("nvml").value("idle_power_w", 70.0);  // 70: the simulator's default
  EXPECT_EQ(g.power_limit_w, max_w);
  ASSERT_TRUE(g.pcie_capacity_gbps);
  EXPECT_NEAR(*g.pcie_capacity_gbps, 63.0, 0.1);  // Gen5 x16
  EXPECT_FALSE(g.nvlink_capacity_gbps);  // no NVLink in this description: null, and listed with NVML's reason
  EXPECT_NE(std::find_if(g.unsupported.begin(), g.unsupported.end(), [](const std::string& u) { return u.rfind("nvlink_capacity_gbps: Not Supported", 0) == 0; }),
            g.unsupported.end());
  const auto& a = g.overall.averages;
  ASSERT_TRUE(a.utilization_fraction && a.power_w && a.pcie_gbps);
  // The simulator's utilization climbs 0 -> 20% in the first second (10 s triangle): not idle, not busy.
  EXPECT_GT(*a.utilization_fraction, 0.02);
  EXPECT_LT(*a.utilization_fraction, 0.3);
  EXPECT_GT(*a.power_w, idle_w);
  EXPECT_LT(*a.power_w, idle_w + 0.3 * (max_w - idle_w));
  EXPECT_NE(g.overall.classification, interprobe::report::TelemetryClass::compute_bound);
  interprobe::testing::expect_schema_valid(report);
  // The recording replays to the same verdicts.
  auto replayed = tree.path() / "replayed.json";
  p = run_interprobe({"observe", "--replay", trace.string(), "--window", "1s", "-o", replayed.string(), "-q"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto back = interprobe::report::parse_report_text(read_text(replayed), replayed.string());
  ASSERT_TRUE(back.telemetry);
  ASSERT_EQ(back.telemetry->gpus.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(back.telemetry->gpus[i].overall.classification, r.telemetry->gpus[i].overall.classification) << i;
    EXPECT_EQ(back.telemetry->gpus[i].overall.reason, r.telemetry->gpus[i].overall.reason) << i;
  }
}

TEST(ObserveCli, WithoutNvmlExitsFourWithTheReason) {
  auto p = run_interprobe({"observe", "--duration", "1s", "-q"}, {"INTERPROBE_NVML_LIB=/nonexistent/libnvidia-ml.so.1"});
  EXPECT_EQ(p.exit_code, 4) << p.out << p.err;
  EXPECT_NE((p.out + p.err).find("NVML"), std::string::npos) << p.out << p.err;
}

TEST(ObserveCli, BadInputExitsTwoNamingIt) {
  interprobe::testing::TempTree tree;
  auto bad = tree.path() / "bad.json";
  std::ofstream(bad) << R"({"format":"interprobe-telemetry-trace","version":1,"interval_s":0.1,"gpus":[{"index":0}],"samples":[{"t_s":0,"gpu":5}]})";
  auto p = run_interprobe({"observe", "--replay", bad.string(), "-q"});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("samples[0].gpu"), std::string::npos) << p.err;
  // A kind nlohmann's decoding would convert (a fraction into a GPU index): the schema check names it.
  std::ofstream(bad, std::ios::trunc)
      << R"({"format":"interprobe-telemetry-trace","version":1,"interval_s":0.1,"gpus":[{"index":0}],"samples":[{"t_s":0,"gpu":0.5}]})";
  p = run_interprobe({"observe", "--replay", bad.string(), "-q"});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find(bad.string() + ": samples[0].gpu: expected an integer, found 0.5"), std::string::npos) << p.err;
  p = run_interprobe({"observe", "--interval", "fast", "-q"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("--interval"), std::string::npos) << p.err;
  p = run_interprobe({"observe", "--window", "0.5s", "--replay", fixture("idle"), "-q"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("--window"), std::string::npos) << p.err;
}

// `run` takes two seconds of counters before measuring; without NVML (live) or without a recorded
// trace (--root) the probe is `unsupported` with the reason and the run goes on (exit 0).
TEST(ObserveCli, RunRecordsTelemetryUnsupportedWithoutNvml) {
  auto p = run_interprobe({"run", "--only", "system,telemetry", "--json", "-q"}, {"INTERPROBE_NVML_LIB=/nonexistent/libnvidia-ml.so.1"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "run");
  const auto* t = r.probe("telemetry");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->status, interprobe::report::ProbeStatus::unsupported);
  EXPECT_NE(t->reason.value_or("").find("NVML"), std::string::npos) << t->reason.value_or("");
  EXPECT_FALSE(r.telemetry);
  p = run_interprobe({"run", "--root", std::string(INTERPROBE_FIXTURES) + "/minimal-kvm-guest", "--only", "telemetry", "--json", "-q"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  r = interprobe::report::parse_report_text(p.out, "run --root");
  ASSERT_NE(r.probe("telemetry"), nullptr);
  EXPECT_EQ(r.probe("telemetry")->status, interprobe::report::ProbeStatus::unsupported);
  EXPECT_NE(r.probe("telemetry")->reason.value_or("").find("telemetry.json"), std::string::npos);
}

// GPM live: the simulated NVML serves the seed's activity (SM active 0.3, DRAM 0.2, tensor 0.05) on
// fully utilized H100s; the sampler's support query and two-sample probe pass and the rules call it
// small-kernel/launch-bound. With DRAM 0.8 the same GPUs are memory-bound.
TEST(ObserveCli, LiveGpmOnTheSimulatedNvmlClassifiesByTheGpmRules) {
  interprobe::testing::TempTree tree;
  auto r = observe_live(tree, busy_h100_env(tree, {{"gpm_sm_active", 0.3}, {"gpm_dram_active", 0.2}, {"gpm_tensor_active", 0.05}}));
  ASSERT_TRUE(r.telemetry);
  ASSERT_EQ(r.telemetry->gpus.size(), 2u);
  for (const auto& g : r.telemetry->gpus) {
    EXPECT_FALSE(g.gpm_reason) << *g.gpm_reason;
    const auto& a = g.overall.averages;
    ASSERT_TRUE(a.sm_active_fraction && a.dram_active_fraction && a.tensor_active_fraction && a.sm_occupancy_fraction);
    EXPECT_NEAR(*a.sm_active_fraction, 0.3, 0.01);
    EXPECT_NEAR(*a.dram_active_fraction, 0.2, 0.01);
    EXPECT_NEAR(*a.tensor_active_fraction, 0.05, 0.01);
    EXPECT_EQ(g.overall.classification, interprobe::report::TelemetryClass::small_kernel_launch_bound) << g.overall.reason;
    EXPECT_EQ(g.overall.rule, "gpm_small_kernel");
    // NVLink capacity from NVML fields 90/91: 18 links x 25 GB/s per direction (H100, docs/reference.md §12).
    ASSERT_TRUE(g.nvlink_capacity_gbps);
    EXPECT_DOUBLE_EQ(*g.nvlink_capacity_gbps, 450.0);
    ASSERT_TRUE(a.nvlink_capacity_fraction && a.nvlink_gbps);
    EXPECT_NEAR(*a.nvlink_capacity_fraction, *a.nvlink_gbps / 450.0, 1e-9);
  }
  interprobe::testing::TempTree tree2;
  // Issue 31 point 6: 4 of the 18 links down (present, not active): capacity 14 x 25 GB/s, not 18 x 25.
  r = observe_live(tree2, busy_h100_env(tree2, {{"gpm_sm_active", 0.5}, {"gpm_dram_active", 0.8}, {"nvlinks_down", 4}}));
  ASSERT_TRUE(r.telemetry);
  for (const auto& g : r.telemetry->gpus) {
    ASSERT_TRUE(g.nvlink_capacity_gbps);
    EXPECT_DOUBLE_EQ(*g.nvlink_capacity_gbps, 350.0);
  }
  ASSERT_TRUE(r.telemetry);
  for (const auto& g : r.telemetry->gpus)
    EXPECT_EQ(g.overall.classification, interprobe::report::TelemetryClass::memory_bound) << g.overall.reason;
}

// Each step of the support check, switched off in the simulator, leaves the GPM fields null with
// the step that failed, and the busy GPU undecided (never compute-bound from utilization and power).
TEST(ObserveCli, LiveGpmUnsupportedIsNullWithTheReason) {
  const std::pair<nlohmann::json, const char*> cases[] = {
      {{{"gpm", "unsupported"}}, "nvmlGpmQueryDeviceSupport"},
      {{{"gpm", "probe_fails"}}, "live probe: nvmlGpmSampleGet"},
      {{{"virtualization_mode", 2}}, "vGPU"},
  };
  for (const auto& [nvml, reason] : cases) {
    interprobe::testing::TempTree tree;
    auto r = observe_live(tree, busy_h100_env(tree, nvml));
    ASSERT_TRUE(r.telemetry) << reason;
    for (const auto& g : r.telemetry->gpus) {
      ASSERT_TRUE(g.gpm_reason) << reason;
      EXPECT_NE(g.gpm_reason->find(reason), std::string::npos) << *g.gpm_reason;
      EXPECT_FALSE(g.overall.averages.sm_active_fraction);
      EXPECT_EQ(g.overall.classification, interprobe::report::TelemetryClass::undecided) << g.overall.reason;
      EXPECT_EQ(g.overall.rule, "busy_without_gpm");
      ASSERT_TRUE(g.overall.decide_with);
      EXPECT_NE(g.overall.decide_with->find(reason), std::string::npos) << *g.overall.decide_with;
    }
  }
}

// `observe --replay`'s header names the trace (it read nothing of this machine), never "live machine".
TEST(ObserveCli, ReplayHeaderNamesTheTraceFile) {
  auto p = run_interprobe({"observe", "--replay", fixture("idle"), "--no-color"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("replayed telemetry trace " + fixture("idle")), std::string::npos) << p.out;
  EXPECT_EQ(p.out.find("live machine"), std::string::npos) << p.out;
}

// `snapshot` records two seconds of counters as /telemetry.json; `observe --root` classifies that
// trace (header: the tree and the trace), and a snapshot of the snapshot keeps it. Without NVML the
// manifest says why there is none.
TEST(ObserveCli, SnapshotRecordsTheTraceAndObserveRootClassifiesIt) {
  interprobe::testing::TempTree tree;
  auto snap = tree.path() / "snap";
  auto p = run_interprobe({"snapshot", "-o", snap.string(), "-q"}, busy_h100_env(tree, {{"gpm_dram_active", 0.8}, {"gpm_sm_active", 0.5}}));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  ASSERT_TRUE(fs::exists(snap / "telemetry.json"));
  auto out = tree.path() / "root.json";
  p = run_interprobe({"observe", "--root", snap.string(), "--window", "1s", "-o", out.string(), "--no-color"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("replayed tree " + snap.string() + " (telemetry trace /telemetry.json)"), std::string::npos) << p.out;
  auto r = interprobe::report::parse_report_text(read_text(out), out.string());
  ASSERT_TRUE(r.telemetry);
  EXPECT_EQ(r.telemetry->source, interprobe::report::TelemetrySource::replay);
  EXPECT_EQ(r.telemetry->trace, "/telemetry.json");
  ASSERT_EQ(r.telemetry->gpus.size(), 2u);
  for (const auto& g : r.telemetry->gpus)
    EXPECT_EQ(g.overall.classification, interprobe::report::TelemetryClass::memory_bound) << g.overall.reason;
  auto again = tree.path() / "snap-of-snap";
  p = run_interprobe({"snapshot", "--root", snap.string(), "-o", again.string(), "-q"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(read_text(again / "telemetry.json"), read_text(snap / "telemetry.json"));

  auto bare = tree.path() / "no-nvml";
  p = run_interprobe({"snapshot", "-o", bare.string(), "-q"}, {"INTERPROBE_NVML_LIB=/nonexistent/libnvidia-ml.so.1"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_FALSE(fs::exists(bare / "telemetry.json"));
  EXPECT_NE(read_text(bare / "manifest.json").find("telemetry not recorded: telemetry needs NVML"), std::string::npos);
}

// A GPU bandwidth sweep without NVML: every size says why it has no telemetry, and the text says
// it once per sweep; the report validates.
TEST(ObserveCli, GpuMeasurementsWithoutNvmlSayWhyTheyHaveNoTelemetry) {
  interprobe::testing::TempTree tree;
  auto out = tree.path() / "bw.json";
  auto p = run_interprobe({"bw", "--engine", "cuda", "--sizes", "4K,1M", "--budget", "0.05", "-o", out.string(), "--no-color"},
                          {std::string("INTERPROBE_CUDA_LIB=") + INTERPROBE_SIM_CUDA, "INTERPROBE_NVML_LIB=/nonexistent/libnvidia-ml.so.1",
                           std::string("INTERPROBE_SIM_CONFIG=") + INTERPROBE_SIM_DEVICES + "/l4-1x-cuda-12.2.json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("telemetry: none (no telemetry: telemetry needs NVML"), std::string::npos) << p.out;
  auto r = interprobe::report::parse_report_text(read_text(out), out.string());
  ASSERT_TRUE(r.bandwidth);
  ASSERT_FALSE(r.bandwidth->sweeps.empty());
  for (const auto& s : r.bandwidth->sweeps)
    for (const auto& point : s.points) {
      ASSERT_TRUE(point.telemetry);
      EXPECT_FALSE(point.telemetry->averages);
      EXPECT_NE(point.telemetry->reason.value_or("").find("NVML"), std::string::npos);
    }
  interprobe::testing::expect_schema_valid(out);
}

// --model/--tp: the replayed seed's classes next to the ranking of that workload, in the JSON
// (bottlenecks.workloads[].observed) and in the text's verdict block; bad workload options exit 2
// before anything is read.
TEST(ObserveCli, ModelAndTpTieTheClassesToTheVerdict) {
  interprobe::testing::TempTree tree;
  auto out = tree.path() / "tied.json";
  const std::string model = std::string(INTERPROBE_SOURCE_DIR) + "/examples/models/llama-3.1-70b.json";
  auto p = run_interprobe({"observe", "--replay", fixture("seed_no_gpm"), "--model", model, "--tp", "2", "--batch", "8", "--assume",
                           "gpu=rtx-pro-6000", "-o", out.string(), "--no-color"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = interprobe::report::parse_report_text(read_text(out), out.string());
  ASSERT_TRUE(r.bottlenecks);
  ASSERT_EQ(r.bottlenecks->workloads.size(), 1u);
  const auto& w = r.bottlenecks->workloads[0];
  EXPECT_EQ(w.tp, 2);
  ASSERT_TRUE(w.observed);
  EXPECT_NE(w.observed->find("observed: 2 GPUs undecided (could be communication/synchronization or small-kernel/launch-bound)"),
            std::string::npos) << *w.observed;
  auto verdict = p.out.find("\nverdict\n");
  ASSERT_NE(verdict, std::string::npos) << p.out;
  auto tie = p.out.find("  telemetry ", verdict);  // a line of the verdict block, before the findings
  ASSERT_NE(tie, std::string::npos) << p.out;
  EXPECT_LT(tie, p.out.find("\nfindings\n"));
  EXPECT_EQ(p.out.find("observed: 2 GPUs undecided", tie), p.out.find_first_not_of(' ', tie + 11)) << p.out;
  interprobe::testing::expect_schema_valid(out);
  p = run_interprobe({"observe", "--replay", fixture("seed_no_gpm"), "--tp", "0", "-q"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("--tp 0"), std::string::npos) << p.err;
}
