// `interprobe analyze` through the binary: the seed case ranked offline with the verdict first,
// the updated report written with -o and valid against the schema, and bad input as exit 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "model/json.hpp"
#include "support/run_binary.hpp"
#include "support/schema_check.hpp"

using interprobe::testing::run_interprobe;
namespace fs = std::filesystem;
namespace report = interprobe::report;

namespace {
const std::string kSeed = std::string(INTERPROBE_FIXTURES) + "/seed-case/report.json";
const std::string kModels = std::string(INTERPROBE_SOURCE_DIR) + "/examples/models/";
}  // namespace

TEST(AnalyzeCli, SeedCaseVerdictComesFirstAndTheWrittenReportValidates) {
  char tmpl[] = "/tmp/interprobe-analyze-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  auto out = dir / "ranked.json";
  auto p = run_interprobe({"analyze", kSeed, "--model", kModels + "glm-5-nvfp4.json", "--tp", "8", "--batch", "1,8,64",
                           "--tokens-per-s", "10.33,225", "--concurrency", "1,64", "--assume", "gpu=rtx-pro-6000", "-o",
                           out.string()},
                          {"NO_COLOR=1"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto verdict = p.out.find("\nverdict\n");
  auto findings = p.out.find("\nfindings\n");
  ASSERT_NE(verdict, std::string::npos) << p.out;
  EXPECT_LT(verdict, findings);
  EXPECT_NE(p.out.find("not established"), std::string::npos);
  EXPECT_NE(p.out.find("(assumed)"), std::string::npos);  // an assumed price is labelled where it is shown
  report::Report r = report::read_report_file(out);
  ASSERT_TRUE(r.bottlenecks);
  ASSERT_EQ(r.bottlenecks->workloads.size(), 1u);
  EXPECT_EQ(r.bottlenecks->workloads[0].tp, 8);
  ASSERT_TRUE(r.collective);  // what was measured is kept
  interprobe::testing::expect_schema_valid(out);
  fs::remove_all(dir);
}

TEST(AnalyzeCli, BadInputExitsTwoNamingWhatIsWrong) {
  char tmpl[] = "/tmp/interprobe-analyze-bad-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  std::ofstream(dir / "gpt2.json") << R"({"model_type": "gpt2", "n_embd": 768})";
  std::ofstream(dir / "nokey.json") << R"({"model_type": "llama", "hidden_size": 4096})";
  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  const Case cases[] = {
      {{"analyze", kSeed, "--model", (dir / "gpt2.json").string()}, "model_type 'gpt2'"},
      {{"analyze", kSeed, "--model", (dir / "nokey.json").string()}, "num_hidden_layers"},
      {{"analyze", kSeed, "--model", (dir / "missing.json").string()}, "missing.json"},
      {{"analyze", kSeed, "--model", kModels + "llama-3.1-70b.json", "--tp", "3"}, "--tp 3"},
      {{"analyze", kSeed, "--model", kModels + "llama-3.1-70b.json", "--tp", "8", "--ep"}, "--ep needs an MoE model"},
      {{"analyze", kSeed, "--model", kModels + "mixtral-8x7b.json", "--tp", "16", "--ep"}, "divide among --tp 16"},
      {{"analyze", kSeed, "--assume", "gpu=tpu-v5"}, "tpu-v5"},
      {{"analyze", kSeed, "--assume", "h100"}, "gpu=NAME"},
      {{"analyze", kSeed, "--assume", "gpu=h100-sxm,link=infiniband"}, "link='infiniband'"},
      {{"analyze", kSeed, "--assume", "gpu=h100-sxm,engine=ollama"}, "engine='ollama'"},
      {{"analyze", kSeed, "--assume", "gpu=h100-sxm,host_us=-5"}, "host_us='-5'"},
      {{"analyze", kSeed, "--assume", "gpu=h100-sxm,graphs=maybe"}, "graphs='maybe'"},
      {{"analyze", kSeed, "--concurrency", "4"}, "--concurrency needs"},
      {{"analyze", kSeed, "--tokens-per-s", "10,20", "--concurrency", "1"}, "one concurrency per speed"},
      {{"analyze", kSeed, "--batch", "1,0"}, "--batch"},
      {{"analyze", (dir / "no-report.json").string()}, "no-report.json"},
  };
  for (const auto& c : cases) {
    auto p = run_interprobe(c.args);
    EXPECT_EQ(p.exit_code, 2) << c.args.back() << ": " << p.err;
    EXPECT_NE(p.err.find(c.names), std::string::npos) << c.names << " not in: " << p.err;
  }
  fs::remove_all(dir);
}

// examples/reports are for people to open: each must still read, validate and render.
TEST(ExampleReports, EveryExampleReportReadsAndRendersWithItsVerdict) {
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(std::string(INTERPROBE_SOURCE_DIR) + "/examples/reports")) {
    if (entry.path().extension() != ".json") continue;
    ++seen;
    auto p = run_interprobe({"report", entry.path().string()}, {"NO_COLOR=1"});
    EXPECT_EQ(p.exit_code, 0) << entry.path() << ": " << p.err;
    EXPECT_NE(p.out.find("\nverdict\n"), std::string::npos) << entry.path();
  }
  EXPECT_GE(seen, 2);
}

// What `observe` saw joins the verdict (issue 32): the seed's recording (100% utilization at 55% of
// the power limit) as a trace, and as the report `observe --replay ... -o` writes; a report without
// telemetry exits 2 naming the file and the command that records it.
TEST(AnalyzeCli, ObserveDataJoinsTheVerdictAsTraceOrReport) {
  char tmpl[] = "/tmp/interprobe-analyze-observe-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  const std::string trace = std::string(INTERPROBE_FIXTURES) + "/telemetry/seed_no_gpm.json";
  auto observed_report = dir / "o.json";
  auto rec = run_interprobe({"observe", "--replay", trace, "-o", observed_report.string(), "-q"});
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  for (const std::string& observed : {trace, observed_report.string()}) {
    auto out = dir / "ranked.json";
    auto p = run_interprobe({"analyze", kSeed, "--model", kModels + "glm-5-nvfp4.json", "--tp", "8", "--batch", "1",
                             "--tokens-per-s", "10.33", "--assume", "gpu=rtx-pro-6000,engine=sglang,graphs=off",
                             "--observe", observed, "-o", out.string(), "-q"});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    report::Report r = report::read_report_file(out);
    ASSERT_TRUE(r.bottlenecks && r.telemetry) << observed;
    const auto& w = r.bottlenecks->workloads.at(0);
    EXPECT_NE(w.verdict.find("observed while serving: 2 of 2 GPUs 100% utilized at 55% of their power limit"),
              std::string::npos)
        << observed << ": " << w.verdict;
    ASSERT_TRUE(w.observed) << observed;
    EXPECT_NE(w.observed->find("undecided"), std::string::npos) << *w.observed;
    interprobe::testing::expect_schema_valid(out);
  }
  auto bad = run_interprobe({"analyze", kSeed, "--model", kModels + "glm-5-nvfp4.json", "--tp", "8", "--assume",
                             "gpu=rtx-pro-6000", "--observe", kSeed});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--observe " + kSeed + ": the report has no telemetry"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("interprobe observe --duration 60s -o FILE"), std::string::npos) << bad.err;
  fs::remove_all(dir);
}

// A report with constructed parts says so first, in text, markdown and HTML; one read from a
// machine has no banner.
TEST(AnalyzeCli, AConstructedReportCarriesABannerInItsHeader) {
  char tmpl[] = "/tmp/interprobe-banner-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  auto html = dir / "seed.html";
  auto text = run_interprobe({"report", kSeed}, {"NO_COLOR=1", "COLUMNS=100"});
  auto md = run_interprobe({"report", kSeed, "--format", "markdown", "--export-html", html.string()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  ASSERT_EQ(md.exit_code, 0) << md.err;
  std::ifstream in(html);
  std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const std::string* out : {&text.out, &md.out, &page}) {
    auto banner = out->find("CONSTRUCTED, NOT MEASURED");
    ASSERT_NE(banner, std::string::npos) << *out;
    EXPECT_LT(banner, out->find("host"));  // first in the header
    EXPECT_NE(out->find("all-reduce sweep over 8 ranks"), std::string::npos);
  }
  auto vm = run_interprobe({"report", std::string(INTERPROBE_SOURCE_DIR) + "/examples/reports/this-vm-run.json"});
  ASSERT_EQ(vm.exit_code, 0) << vm.err;
  EXPECT_EQ(vm.out.find("CONSTRUCTED"), std::string::npos);
  fs::remove_all(dir);
}
