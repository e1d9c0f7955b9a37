// CLI tests: run the real binary, check exit codes and what reaches stdout/stderr.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/json.hpp"
#include "support/run_binary.hpp"
#include "support/temp_tree.hpp"

using interprobe::testing::run_interprobe;
namespace fs = std::filesystem;

namespace {

const std::string kMinimal = std::string(INTERPROBE_FIXTURES) + "/minimal-kvm-guest";

fs::path temp_dir() {
  char tmpl[] = "/tmp/interprobe-cli-XXXXXX";
  return ::mkdtemp(tmpl);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(Cli, VersionListsFeaturesAndLibraries) {
  auto p = run_interprobe({"--version"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("interprobe 0."), std::string::npos);
  for (const char* feature : {"cuda=", "nccl=", "nvml=", "hwloc=", "libpci=", "mpi="})
    EXPECT_NE(p.out.find(feature), std::string::npos) << feature;
  for (const char* lib : {"cuda driver:", "nvml:", "nccl:"}) EXPECT_NE(p.out.find(lib), std::string::npos) << lib;
}

TEST(Cli, VersionWithBrokenLibraryOverrideReportsItAndStillStarts) {
  auto p = run_interprobe({"--version", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1"});
  EXPECT_EQ(p.exit_code, 0);
  EXPECT_NE(p.out.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << p.out;
  auto env = run_interprobe({"--version"}, {"INTERPROBE_NCCL_LIB=/nonexistent/libnccl.so.2"});
  EXPECT_NE(env.out.find("/nonexistent/libnccl.so.2"), std::string::npos) << env.out;
}

TEST(Cli, RunOnFixtureGivesJsonOnStdoutOnly) {
  auto p = run_interprobe({"run", "--root", kMinimal, "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  EXPECT_FALSE(r.host.live);
  EXPECT_EQ(r.host.hostname, "kvm-guest-01");
  ASSERT_TRUE(r.system);
  EXPECT_EQ(r.system->logical_cpus, 4);
  EXPECT_EQ(r.system->memory_bytes, 16384000LL * 1024);
  EXPECT_TRUE(r.tool.libraries.empty());  // nothing live touched under --root
  ASSERT_TRUE(r.tool.libraries_not_probed);
  ASSERT_NE(r.probe("system"), nullptr);
  EXPECT_EQ(r.probe("system")->status, interprobe::report::ProbeStatus::ok);
}

TEST(Cli, GlobalOptionsWorkBeforeTheSubcommandToo) {
  auto p = run_interprobe({"--root", kMinimal, "--format", "markdown", "run"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("## system"), std::string::npos);
}

TEST(Cli, PlainInterprobeIsRun) {
  auto p = run_interprobe({"--root", kMinimal, "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NO_THROW(interprobe::report::parse_report_text(p.out, "stdout"));
}

TEST(Cli, BadOptionIsUsageError) {
  auto p = run_interprobe({"run", "--no-such-option"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("--no-such-option"), std::string::npos) << p.err;
  EXPECT_EQ(run_interprobe({"--format", "yaml"}).exit_code, 2);
  EXPECT_EQ(run_interprobe({"--json", "--format", "text"}).exit_code, 2);
  EXPECT_EQ(run_interprobe({"frobnicate"}).exit_code, 2);
}

// Issue 36: a mistyped subcommand or option names the nearest one; a word near nothing gets no guess.
TEST(Cli, MistypedCommandOrOptionSaysDidYouMean) {
  auto command = run_interprobe({"tpo"});
  EXPECT_EQ(command.exit_code, 2);
  EXPECT_NE(command.err.find("unknown command 'tpo': did you mean 'topo'?"), std::string::npos) << command.err;
  auto option = run_interprobe({"topo", "--formt", "json"});
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_NE(option.err.find("unknown option '--formt': did you mean '--format'?"), std::string::npos) << option.err;
  auto sub_option = run_interprobe({"compare", "a.json", "b.json", "--detial"});
  EXPECT_NE(sub_option.err.find("did you mean '--detail'?"), std::string::npos) << sub_option.err;
  auto far = run_interprobe({"xyzzyplugh"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
}

TEST(Cli, HelpListsEachChoiceOnce) {
  auto help = run_interprobe({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--format text|json|markdown|html|prometheus"), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find("{text,json"), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find("{never,info"), std::string::npos) << help.out;
}

TEST(Cli, MissingRootIsUsageErrorNamingThePath) {
  auto p = run_interprobe({"run", "--root", "/nonexistent/tree"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("/nonexistent/tree"), std::string::npos) << p.err;
  EXPECT_TRUE(p.out.empty());
}

TEST(Cli, MalformedCpuidTxtIsUsageErrorNamingFileAndLine) {
  auto dir = temp_dir();
  fs::copy(kMinimal, dir / "root", fs::copy_options::recursive);
  std::ofstream(dir / "root" / "cpuid.txt") << "0x1 0x0 0x0 0x0 0x0 0x0\n0x40000000 zz\n";
  auto p = run_interprobe({"run", "--root", (dir / "root").string()});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("cpuid.txt:2"), std::string::npos) << p.err;
  fs::remove_all(dir);
}

TEST(Cli, OutputFileThenReportAsMarkdown) {
  auto dir = temp_dir();
  auto file = dir / "r.json";
  auto run = run_interprobe({"run", "--root", kMinimal, "-o", file.string(), "--quiet"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto r = interprobe::report::read_report_file(file);
  EXPECT_EQ(r.host.hostname, "kvm-guest-01");
  auto md = run_interprobe({"report", file.string(), "--format", "markdown"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("# interprobe"), std::string::npos);
  EXPECT_NE(md.out.find("kvm-guest-01"), std::string::npos);
  auto json = run_interprobe({"report", file.string(), "--json"});
  EXPECT_EQ(json.out, slurp(file));  // re-rendering a saved report is lossless
  fs::remove_all(dir);
}

TEST(Cli, TruncatedReportIsUsageErrorNamingTheFile) {
  auto dir = temp_dir();
  auto file = dir / "cut.json";
  auto run = run_interprobe({"run", "--root", kMinimal, "--json"});
  std::ofstream(file) << run.out.substr(0, run.out.size() / 3);
  auto p = run_interprobe({"report", file.string()});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find(file.string()), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("byte"), std::string::npos) << p.err;
  EXPECT_EQ(run_interprobe({"report", (dir / "missing.json").string()}).exit_code, 2);
  EXPECT_EQ(run_interprobe({"report"}).exit_code, 2);
  fs::remove_all(dir);
}

TEST(Cli, UnwritableOutputFailsBeforeMeasuring) {
  auto p = run_interprobe({"run", "--root", kMinimal, "-o", "/nonexistent/dir/r.json"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("/nonexistent/dir"), std::string::npos) << p.err;
}

TEST(Cli, EveryWrittenReportValidatesAgainstTheSchema) {
  auto dir = temp_dir();
  auto fixture_report = dir / "fixture.json";
  auto live_report = dir / "live.json";
  ASSERT_EQ(run_interprobe({"run", "--root", kMinimal, "-o", fixture_report.string(), "-q"}).exit_code, 0);
  // Every probe live; one model (the smallest lm_head of the examples) at batch 1, so the compute
  // probe times few GEMMs: the shapes of three models at three batches made this the longest test
  // of the suite under ASan, and every section's shape is the same with one.
  std::string model = std::string(INTERPROBE_SOURCE_DIR) + "/examples/models/mixtral-8x7b.json";
  ASSERT_EQ(run_interprobe({"run", "-o", live_report.string(), "-q", "--batch", "1", "--model", model}).exit_code, 0);
  std::string python = INTERPROBE_PYTHON3;
  if (python.empty() || std::system((python + " -c 'import jsonschema' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "python3-jsonschema not installed";
  std::string validator = std::string(INTERPROBE_SOURCE_DIR) + "/tests/cli/validate_report.py";
  std::string schema = std::string(INTERPROBE_SOURCE_DIR) + "/report/schema/report.schema.json";
  for (const auto& file : {fixture_report, live_report}) {
    std::string cmd = python + " " + validator + " " + schema + " " + file.string();
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  fs::remove_all(dir);
}

TEST(Cli, RunOnlyAndSkipListTheLeftOutProbesAsSkipped) {
  auto p = run_interprobe({"run", "--root", kMinimal, "--json", "--only", "system,virtualization"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = interprobe::report::parse_report_text(p.out, "stdout");
  ASSERT_NE(r.probe("system"), nullptr);
  EXPECT_EQ(r.probe("system")->status, interprobe::report::ProbeStatus::ok);
  ASSERT_NE(r.probe("topology"), nullptr);
  EXPECT_EQ(r.probe("topology")->status, interprobe::report::ProbeStatus::skipped);
  EXPECT_NE(r.probe("topology")->reason.value_or("").find("--only"), std::string::npos);
  EXPECT_FALSE(r.topology.has_value());

  auto skip = run_interprobe({"run", "--root", kMinimal, "--json", "--skip", "bandwidth,collective"});
  ASSERT_EQ(skip.exit_code, 0) << skip.err;
  auto s = interprobe::report::parse_report_text(skip.out, "stdout");
  ASSERT_NE(s.probe("bandwidth"), nullptr);
  EXPECT_EQ(s.probe("bandwidth")->status, interprobe::report::ProbeStatus::skipped);
  EXPECT_EQ(s.probe("bandwidth")->reason.value_or(""), "not selected (--skip bandwidth)");
  EXPECT_EQ(s.probe("topology")->status, interprobe::report::ProbeStatus::ok);

  auto bad = run_interprobe({"run", "--root", kMinimal, "--skip", "bandwith"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bandwith"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("bandwidth, collective"), std::string::npos) << bad.err;  // the names it knows
  EXPECT_TRUE(bad.out.empty());
}

// The case: a host whose GPUs are bound to vfio-pci (to pass them to guests) booted with
// the IOMMU off, so no guest can get them safely: the HGX fixture with its two GPUs rebound and
// its IOMMU groups gone. A `fail` finding; --fail-on fail exits 1, without the option 0.
TEST(FailOn, VirtOnAHostWithGpusOnVfioPciAndNoIommuExitsOne) {
  interprobe::testing::TempTree tree(std::string(INTERPROBE_FIXTURES) + "/virt/bare-metal-hgx");
  for (const char* dev : {"0000:17:00.0/0000:18:00.0", "0000:17:01.0/0000:19:00.0"}) {
    auto dir = tree.path() / "sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0" / dev;
    fs::remove(dir / "driver");
    fs::create_symlink("../../../../../../bus/pci/drivers/vfio-pci", dir / "driver");
  }
  fs::remove_all(tree.path() / "sys/kernel/iommu_groups");
  auto file = tree.path() / "virt.json";
  auto gated = run_interprobe({"virt", "--root", tree.path().string(), "-q", "-o", file.string(), "--fail-on", "fail"});
  EXPECT_EQ(gated.exit_code, 1) << gated.err;
  EXPECT_NE(gated.err.find("virt.vfio_without_iommu (fail)"), std::string::npos) << gated.err;
  EXPECT_TRUE(fs::exists(file));  // written before the verdict
  EXPECT_EQ(run_interprobe({"virt", "--root", tree.path().string(), "-q"}).exit_code, 0);
  // The unchanged host (IOMMU on) has no fail: the gate passes.
  EXPECT_EQ(run_interprobe({"virt", "--root", std::string(INTERPROBE_FIXTURES) + "/virt/bare-metal-hgx", "-q", "--fail-on", "fail"})
                .exit_code,
            0);
}

// --fail-on: the report is written first, then exit 1 when a finding reaches the severity. The
// Proxmox q35 fixture has one warn finding (the emulated root ports) and no fail.
TEST(FailOn, ExitsOneAfterTheReportIsWrittenWhenAFindingReachesTheSeverity) {
  const std::string tree = std::string(INTERPROBE_FIXTURES) + "/topology/proxmox-q35-8gpu-rootports";
  char tmpl[] = "/tmp/interprobe-fail-on-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  auto file = dir / "r.json";
  auto warn = run_interprobe({"run", "--root", tree, "-q", "-o", file.string(), "--fail-on", "warn"});
  EXPECT_EQ(warn.exit_code, 1) << warn.err;
  EXPECT_NE(warn.err.find("virt.emulated_port_slower_than_gpu (warn)"), std::string::npos) << warn.err;
  EXPECT_TRUE(fs::exists(file));  // written before the verdict
  EXPECT_EQ(run_interprobe({"run", "--root", tree, "-q", "--fail-on", "fail"}).exit_code, 0);
  EXPECT_EQ(run_interprobe({"run", "--root", tree, "-q"}).exit_code, 0);  // default: never
  EXPECT_EQ(run_interprobe({"topo", "--root", tree, "-q", "--fail-on", "info"}).exit_code, 1);
  EXPECT_EQ(run_interprobe({"report", file.string(), "--fail-on", "warn"}).exit_code, 1);
  EXPECT_EQ(run_interprobe({"report", file.string(), "--fail-on", "fail"}).exit_code, 0);
  auto bad = run_interprobe({"run", "--root", tree, "--fail-on", "error"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--fail-on"), std::string::npos) << bad.err;
  fs::remove_all(dir);
}

// Issue 36: off a terminal (a pipe, a file) text has no width limit unless COLUMNS sets one, so
// no table of any report in the repository wraps a cell or folds into one block per row.
TEST(Cli, PipedTextKeepsEveryRepositoryReportsTablesWhole) {
  const std::string source = INTERPROBE_SOURCE_DIR;
  std::vector<fs::path> reports{source + "/tests/fixtures/seed-case/report.json"};
  for (const auto* folder : {"/examples/reports", "/tests/fixtures/reports"})
    for (const auto& e : fs::directory_iterator(source + folder))
      if (e.path().extension() == ".json") reports.push_back(e.path());
  ASSERT_GE(reports.size(), 5u);
  bool narrow_differs = false;
  for (const auto& report : reports) {
    // {"COLUMNS"} unsets it (glibc putenv without '='): the width the pipe alone decides.
    auto piped = run_interprobe({"report", report.string(), "--fail-on", "never"}, {"COLUMNS"});
    ASSERT_EQ(piped.exit_code, 0) << report << ": " << piped.err;
    auto wide = run_interprobe({"report", report.string(), "--fail-on", "never"}, {"COLUMNS=9999"});
    EXPECT_EQ(piped.out, wide.out) << report << ": piped text was fitted to a width";
    EXPECT_EQ(piped.out.find("do not fit in"), std::string::npos) << report;
    auto narrow = run_interprobe({"report", report.string(), "--fail-on", "never"}, {"COLUMNS=100"});
    narrow_differs = narrow_differs || narrow.out != piped.out;
  }
  EXPECT_TRUE(narrow_differs) << "COLUMNS=100 fits the text to 100 columns: this test would see a wrapped table";
  // `topo --tree > f`: the tree's connectors and the pair matrix whole.
  const std::string hgx = std::string(INTERPROBE_FIXTURES) + "/topology/hgx-h100-nvswitch";
  // The topology section only: the header's start time and the probes' seconds differ per run.
  auto topology_of = [](const std::string& text) {
    auto from = text.find("\ntopology\n"), to = text.find("\nprobes\n");
    return from == std::string::npos || to == std::string::npos ? std::string() : text.substr(from, to - from);
  };
  auto tree = run_interprobe({"topo", "--root", hgx, "--tree", "-q"}, {"COLUMNS"});
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  ASSERT_FALSE(topology_of(tree.out).empty()) << tree.out;
  EXPECT_EQ(topology_of(tree.out), topology_of(run_interprobe({"topo", "--root", hgx, "--tree", "-q"}, {"COLUMNS=9999"}).out));
  EXPECT_NE(topology_of(tree.out), topology_of(run_interprobe({"topo", "--root", hgx, "--tree", "-q"}, {"COLUMNS=100"}).out));
  EXPECT_EQ(tree.out.find("do not fit in"), std::string::npos) << tree.out;
}

// Issue 36: -o is the JSON report on every command; the rendered report goes to --export-*. A name
// that asks for a page, markdown or metrics is refused (exit 2) naming the option that writes it.
TEST(Cli, OutputMeansTheJsonReportOnEveryCommand) {
  auto dir = temp_dir();
  const fs::path json = dir / "r.json", page = dir / "r.html", md = dir / "r.md";
  auto p = run_interprobe({"topo", "--root", kMinimal, "-q", "-o", json.string(), "--export-html", page.string(), "--export-markdown",
                           md.string(), "--format", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(slurp(json).rfind("{", 0), 0u);
  EXPECT_EQ(slurp(page).rfind("<!DOCTYPE html>", 0), 0u) << slurp(page).substr(0, 100);
  EXPECT_NE(slurp(md).find("# interprobe"), std::string::npos) << slurp(md).substr(0, 200);
  EXPECT_EQ(p.out.rfind("{", 0), 0u) << "stdout is what --format asks";
  // The old ambiguous forms: exit 2 before anything is written, naming the right option.
  fs::path stray = dir / "t.html";
  auto topo = run_interprobe({"topo", "--root", kMinimal, "-q", "--format", "html", "-o", stray.string()});
  EXPECT_EQ(topo.exit_code, 2);
  EXPECT_NE(topo.err.find("--export-html"), std::string::npos) << topo.err;
  EXPECT_FALSE(fs::exists(stray));
  auto report = run_interprobe({"report", json.string(), "--format", "html", "-o", (dir / "page").string()});
  EXPECT_EQ(report.exit_code, 2);
  EXPECT_NE(report.err.find("-o always writes the JSON report"), std::string::npos) << report.err;
  EXPECT_TRUE(report.out.empty());
  // report FILE -o OTHER.json re-saves the JSON, as -o does everywhere.
  auto resave = run_interprobe({"report", json.string(), "--format", "json", "-o", (dir / "again.json").string()});
  EXPECT_EQ(resave.exit_code, 0) << resave.err;
  EXPECT_EQ(slurp(dir / "again.json").rfind("{", 0), 0u);
  fs::remove_all(dir);
}

// Issue 36: NVML's P2P status as a GPU x GPU grid, as nvidia-smi topo -p2p r/w prints it.
TEST(Cli, P2pStatusGridOnTheHgxFixtureAndTheSeedCase) {
  const std::string hgx = std::string(INTERPROBE_FIXTURES) + "/topology/hgx-h100-nvswitch";
  auto topo = run_interprobe({"topo", "--root", hgx, "-q", "--no-color"}, {"COLUMNS"});
  ASSERT_EQ(topo.exit_code, 0) << topo.err;
  auto grid = topo.out.find("P2P status read/write (NVML, as nvidia-smi topo -p2p r / w)");
  ASSERT_NE(grid, std::string::npos) << topo.out;
  EXPECT_NE(topo.out.find("GPU0      X  OK/OK  OK/OK", grid), std::string::npos) << topo.out.substr(grid, 1200);
  // The seed case: 28 pairs NVML calls not supported for reads.
  auto seed = run_interprobe({"report", std::string(INTERPROBE_SOURCE_DIR) + "/tests/fixtures/seed-case/report.json", "--no-color"},
                             {"COLUMNS"});
  grid = seed.out.find("P2P status read/write");
  ASSERT_NE(grid, std::string::npos) << seed.out;
  std::string rows = seed.out.substr(grid, seed.out.find("OK = P2P supported", grid) - grid);
  EXPECT_NE(rows.find("NS/"), std::string::npos) << rows;
  EXPECT_EQ(rows.find("OK/OK"), std::string::npos) << rows;
  auto html = run_interprobe({"report", std::string(INTERPROBE_SOURCE_DIR) + "/tests/fixtures/seed-case/report.json", "--format", "html"});
  auto at = html.out.find("P2P status read/write");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(html.out.find("NS/NS", at), std::string::npos);
  // A tree without NVML data has no grid: nothing to show, nothing guessed.
  auto proxmox = run_interprobe({"topo", "--root", std::string(INTERPROBE_FIXTURES) + "/topology/proxmox-q35-8gpu-rootports", "-q"});
  EXPECT_EQ(proxmox.out.find("P2P status read/write"), std::string::npos);
}
