// `interprobe compute` through the real binary: exit codes, messages, a verified host sweep,
// and the saved fixture report.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "model/json.hpp"
#include "support/run_binary.hpp"
#include "support/schema_check.hpp"

using interprobe::testing::run_interprobe;
using interprobe::testing::expect_schema_valid;
namespace fs = std::filesystem;
namespace report = interprobe::report;

namespace {

}  // namespace

TEST(ComputeCli, BadInputExitsTwoNamingTheOption) {
  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  const Case cases[] = {
      {{"compute", "--shapes", "4096"}, "--shapes"},
      {{"compute", "--shapes", "4096x0"}, "--shapes"},
      {{"compute", "--m", "1,0"}, "--m"},
      {{"compute", "--m", "two"}, "--m"},
      {{"compute", "--dtype", "f64"}, "--dtype"},
      {{"compute", "--engine", "tpu"}, "--engine"},
      {{"compute", "--target-cv", "0"}, "--target-cv"},
      {{"compute", "--quick", "--full"}, "--full"},
  };
  for (const auto& c : cases) {
    auto p = run_interprobe(c.args);
    EXPECT_EQ(p.exit_code, 2) << c.args.back() << ": " << p.err;
    EXPECT_NE(p.err.find(c.names), std::string::npos) << p.err;
  }
}

TEST(ComputeCli, CudaEngineExitsFourWithTheReason) {
  auto p = run_interprobe({"compute", "--engine", "cuda", "--json"});
  EXPECT_EQ(p.exit_code, 4) << p.err;
  EXPECT_NE((p.out + p.err).find("cuda compute engine"), std::string::npos) << p.out << p.err;
}

TEST(ComputeCli, HostSweepIsVerifiedAndValidates) {
  char tmpl[] = "/tmp/interprobe-compute-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  auto file = dir / "compute.json";
  auto p = run_interprobe({"compute", "--engine", "host", "--shapes", "512x256", "--m", "1,16", "--dtype", "f32",
                           "--peak-size", "256", "--threads", "1", "-o", file.string()});
  if (p.exit_code == 4 && p.err.find("without OpenBLAS") != std::string::npos) GTEST_SKIP() << p.err;
  ASSERT_EQ(p.exit_code, 0) << p.err;
  report::Report r = report::read_report_file(file);
  ASSERT_TRUE(r.compute);
  EXPECT_EQ(r.compute->plan, report::ComputePlan::custom);
  ASSERT_EQ(r.compute->engines.size(), 1u);
  const auto& e = r.compute->engines[0];
  EXPECT_EQ(e.status, report::EngineStatus::ok);
  EXPECT_EQ(e.threads, 1);
  ASSERT_EQ(e.points.size(), 2u);
  for (const auto& pt : e.points) {
    ASSERT_TRUE(pt.check);
    EXPECT_TRUE(pt.check->passed);
    EXPECT_GT(pt.tflops, 0);
    EXPECT_EQ(pt.shape, "512x256");
  }
  ASSERT_EQ(e.peaks.size(), 1u);
  EXPECT_FALSE(e.peaks[0].published_tflops);  // no published peak for a host CPU: null, labelled
  EXPECT_TRUE(e.peaks[0].published_basis);
  // The host's launch floor: an empty job forked to its threads and joined; no graphs on a host.
  ASSERT_TRUE(e.launch_floor_us);
  EXPECT_GT(*e.launch_floor_us, 0);
  EXPECT_FALSE(e.launch_floor_reason);
  EXPECT_FALSE(e.launch_floor_graph_us);
  expect_schema_valid(file);
  auto shown = run_interprobe({"report", file.string()});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("Compute: host engine"), std::string::npos) << shown.out;
  fs::remove_all(dir);
}

// --model/--tp: the shapes are one rank's layers of the config, computed by hand for this tiny
// Llama (hidden 256, 4 heads of 64, 2 KV heads, intermediate 512, vocab 1000) at tp 2:
// qkv (2 + 2·1)·64 = 256 × 256, o 256 × 128, gate_up 2·256 = 512 × 256, lm_head 500 × 256
// (down, 256 × 256, is qkv's shape and measured once).
TEST(ComputeCli, ModelShapesAreTheLayersOfOneRank) {
  char tmpl[] = "/tmp/interprobe-compute-model-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  auto config = dir / "config.json";
  std::ofstream(config) << R"({"model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
    "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 1000})";
  auto p = run_interprobe({"compute", "--engine", "host", "--model", config.string(), "--tp", "2", "--m", "1", "--dtype",
                           "f32", "--peak-size", "128", "--budget", "0.01", "--threads", "1", "--json"});
  if (p.exit_code == 4 && p.err.find("without OpenBLAS") != std::string::npos) GTEST_SKIP() << p.err;
  ASSERT_EQ(p.exit_code, 0) << p.err;
  report::Report r = report::parse_report_text(p.out, "compute");
  ASSERT_TRUE(r.compute);
  EXPECT_EQ(r.compute->plan, report::ComputePlan::custom);
  std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> shapes;
  for (const auto& pt : r.compute->engines.at(0).points) shapes.emplace_back(pt.shape, pt.n, pt.k);
  decltype(shapes) expected = {{"self_attn.qkv_proj_tp2", 256, 256},
                               {"self_attn.o_proj_tp2", 256, 128},
                               {"mlp.gate_up_proj_tp2", 512, 256},
                               {"lm_head_tp2", 500, 256}};
  EXPECT_EQ(shapes, expected);

  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  const Case bad[] = {
      {{"compute", "--tp", "2"}, "--tp needs --model"},
      {{"compute", "--model", (dir / "missing.json").string()}, "missing.json"},
      {{"compute", "--model", config.string(), "--tp", "3"}, "num_attention_heads"},
      {{"compute", "--model", config.string(), "--shapes", "4x4"}, "--model"},
  };
  for (const auto& c : bad) {
    auto q = run_interprobe(c.args);
    EXPECT_EQ(q.exit_code, 2) << q.err;
    EXPECT_NE(q.err.find(c.names), std::string::npos) << q.err;
  }
  fs::remove_all(dir);
}

TEST(ComputeCli, RunRecordsComputeUnsupportedWhenReplayingATree) {
  auto p = run_interprobe({"run", "--root", std::string(INTERPROBE_FIXTURES) + "/minimal-kvm-guest", "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  report::Report r = report::parse_report_text(p.out, "run");
  const auto* probe = r.probe("compute");
  ASSERT_TRUE(probe);
  EXPECT_EQ(probe->status, report::ProbeStatus::unsupported);
  EXPECT_FALSE(r.compute);
}

TEST(ComputeFixture, SavedHostReportReadsRendersAndValidates) {
  fs::path file = fs::path(INTERPROBE_FIXTURES) / "reports/compute-host-quick.json";
  report::Report r = report::read_report_file(file);
  ASSERT_TRUE(r.compute);
  const auto& e = r.compute->engines.at(0);
  EXPECT_FALSE(e.points.empty());
  for (const auto& p : e.points) EXPECT_TRUE(p.check && p.check->passed);
  expect_schema_valid(file);
  auto shown = run_interprobe({"report", file.string()});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("bound"), std::string::npos);
}
