// `interprobe compare` through the binary: two host bandwidth reports taken back to back, the same
// pair with one path slowed by 10%, fixture reports, groups, and the inputs it refuses.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/run_binary.hpp"
#include "support/sanitizers.hpp"

using interprobe::testing::run_interprobe;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kSeed = std::string(INTERPROBE_SOURCE_DIR) + "/tests/fixtures/seed-case/report.json";
const std::string kThisVm = std::string(INTERPROBE_SOURCE_DIR) + "/examples/reports/this-vm-run.json";

fs::path temp_dir() {
  char tmpl[] = "/tmp/interprobe-compare-XXXXXX";
  return ::mkdtemp(tmpl);
}

json load(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

void save(const fs::path& p, const json& j) { std::ofstream(p) << j.dump(2); }

// 8 sizes (the fewest at which the per-path sign test can reach p < 0.01), pageable only: short.
void measure(const fs::path& out) {
  auto p = run_interprobe({"bw", "--engine", "host", "--sizes", "4,16,64,256,1K,4K,16K,64K", "--memory", "pageable", "-q", "-o",
                           out.string()});
  ASSERT_EQ(p.exit_code, 0) << p.err;
}

json compare_json(const std::vector<std::string>& files) {
  std::vector<std::string> args{"compare"};
  args.insert(args.end(), files.begin(), files.end());
  args.insert(args.end(), {"--format", "json"});
  auto p = run_interprobe(args);
  EXPECT_EQ(p.exit_code, 0) << p.err;
  return json::parse(p.out);
}

// The sweep's points and fit replaced by `from`'s, 10% slower: every time / 0.9, every rate x 0.9.
void slow_down(json& sweep, const json& from) {
  sweep["points"] = from["points"];
  for (auto& p : sweep["points"]) {
    for (const char* key : {"min_us", "median_us", "p95_us", "max_us", "median_ci_low_us", "median_ci_high_us"})
      if (p[key].is_number()) p[key] = p[key].get<double>() / 0.9;
    for (auto& visit : p["visit_medians_us"]) visit = visit.get<double>() / 0.9;
    p["gbps"] = p["gbps"].get<double>() * 0.9;
  }
  sweep["fit"] = from["fit"];
  if (sweep["fit"].is_object()) {
    sweep["fit"]["peak_gbps"] = sweep["fit"]["peak_gbps"].get<double>() * 0.9;
    sweep["fit"]["t0_us"] = sweep["fit"]["t0_us"].get<double>() / 0.9;
  }
}

// CPU seconds the whole machine spent busy (/proc/stat: user, nice, system, irq, softirq, steal).
double machine_busy_s() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return (user + nice + system + irq + softirq + steal) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// CPU seconds of this test's finished children (the interprobe runs).
double children_cpu_s() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// How busy everything else kept the machine while `measure` ran, in CPUs on average: the
// machine's busy time minus this process's and its children's. The load average would count
// the measurement itself (two copy threads on a 2-CPU machine read as busy).
template <typename F>
double others_cpus_during(F measure) {
  auto self_s = [] {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  double busy = machine_busy_s(), children = children_cpu_s(), self = self_s();
  auto start = std::chrono::steady_clock::now();
  measure();
  double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double others_s = (machine_busy_s() - busy) - (children_cpu_s() - children) - (self_s() - self);
  return std::max(0.0, others_s) / std::max(wall_s, 1e-3);
}

// The claims on back-to-back timings are the product's: a Debug or sanitized build times other code.
#if !defined(NDEBUG) || defined(INTERPROBE_TESTS_INSTRUMENTED)
constexpr bool kTimesTheShippedCode = false;
#else
constexpr bool kTimesTheShippedCode = true;
#endif

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", then ") + item;
  return out;
}

std::size_t verdicts(const json& comparison, const std::string& verdict) {
  std::size_t n = 0;
  for (const auto& m : comparison["metrics"]) n += m["sides"][1]["verdict"] == verdict;
  return n;
}

// The first series is `path`'s and worse; no metric of it is better.
void expect_path_worse_and_first(const json& c, const std::string& path) {
  ASSERT_FALSE(c["series"].empty());
  const json& first = c["series"][0];
  EXPECT_EQ(first["series"].get<std::string>().rfind(path, 0), 0u) << c["series"].dump(1);
  EXPECT_EQ(first["sides"][1]["verdict"], "worse") << first.dump(1);
  for (const auto& s : c["series"]) {
    if (s["series"].get<std::string>().rfind(path, 0) == 0) {
      EXPECT_EQ(s["sides"][1]["verdict"], "worse") << s.dump(1);
    }
  }
  for (const auto& m : c["metrics"]) {
    if (m["path"].get<std::string>().rfind(path, 0) == 0) {
      EXPECT_NE(m["sides"][1]["verdict"], "better") << m.dump(1);
    }
  }
}

}  // namespace

TEST(CompareCli, BackToBackHostReportsAreSameAndAPathTenPercentSlowerIsWorseAndFirst) {
  fs::path dir = temp_dir();
  double others = others_cpus_during([&] {
    measure(dir / "a.json");
    if (kTimesTheShippedCode) measure(dir / "b.json");  // the back-to-back claims below need it
  });
  const std::string path = "bandwidth/host/memcpy/node0->node0/pageable/x1/";
  json a = load(dir / "a.json");

  // a against itself with that path 10% slower: measured spreads, no drift between runs.
  json a_slow = a;
  slow_down(a_slow["bandwidth"]["sweeps"][0], a["bandwidth"]["sweeps"][0]);
  save(dir / "a-slow.json", a_slow);
  json self = compare_json({(dir / "a.json").string(), (dir / "a-slow.json").string()});
  expect_path_worse_and_first(self, path);
  for (const auto& m : self["metrics"]) {
    if (m["path"].get<std::string>().rfind(path, 0) != 0 && m["path"] != "probes/bandwidth/duration_s") {
      EXPECT_EQ(m["sides"][1]["verdict"], "same") << m.dump(1);
    }
  }

  // Instrumented, a run is not the shipped code's timing: the back-to-back claims are skipped
  // before measuring b and c (this test runs alone, so its measuring holds up every other test).
  if (!kTimesTheShippedCode) {
    fs::remove_all(dir);
    GTEST_SKIP() << "a Debug or sanitized build: the back-to-back claims time the shipped code";
  }
  // Back to back: b against a; should that pair disagree, c (measured next) against b, then d
  // against c (a third pair since a cold clone's stage 1 once saw 50 and 48 of 56 in the first two). A
  // neighbour on the hypervisor, invisible in this VM's /proc/stat, once slowed every size of one
  // sweep of one run by 1.6x (49 of 56 same; 56 of 56 in the twelve runs after): a real
  // difference, which compare is right to call. A flaw in compare's noise rule fails every pair.
  std::size_t total = 0, same = 0;
  std::string differing;
  std::vector<std::string> pairs_seen;
  double others_most = others;
  for (const auto& [earlier, later] :
       {std::pair{"a.json", "b.json"}, std::pair{"b.json", "c.json"}, std::pair{"c.json", "d.json"}}) {
    const fs::path later_path = dir / later;  // a lambda cannot capture a structured binding before C++20's P1091 (clang 16)
    if (!fs::exists(later_path)) others_most = std::max(others_most, others_cpus_during([&] { measure(later_path); }));
    json pair = compare_json({(dir / earlier).string(), (dir / later).string()});
    total = pair["metrics"].size(), same = verdicts(pair, "same");
    ASSERT_GT(total, 40u);
    pairs_seen.push_back(std::to_string(same) + " of " + std::to_string(total));
    differing.clear();
    for (const auto& m : pair["metrics"])
      if (m["sides"][1]["verdict"] != "same") differing += m.dump() + "\n";
    if (static_cast<double>(same) >= 0.9 * static_cast<double>(total)) break;
  }
  double cpus = static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN));
  std::cout << "back to back: " << joined(pairs_seen) << " metrics same; other processes kept at most " << others_most
            << " of " << cpus << " CPUs busy\n";
  // On a busy machine other processes change what it delivers between the runs, by more than the
  // 10% slowdown below: real differences, which compare is right to call. The claims below are
  // about an idle machine; here they are skipped with the numbers.
  // Quiet means others kept under half a CPU busy on average: ctest -j runs neighbours beside this test.
  if (others_most > 0.5)
    GTEST_SKIP() << "busy machine (other processes kept " << others_most << " of " << cpus << " CPUs busy): "
                 << joined(pairs_seen) << " metrics same between back-to-back runs";
  // Idle, this 2-vCPU VM gave 55 of 55 (55-56 of 56 with the clock row) in ten pairs of ten (2026-12-05), once
  // the host engine kept its destination off the source's 4 KiB offset and compare took 8 CPU
  // cycles a copy as the copy loop's resolution (before: 38-55, a few-byte copy settling 6-9
  // cycles apart from run to run). The 10%-slower claims are a's against itself.
  EXPECT_GE(static_cast<double>(same), 0.9 * static_cast<double>(total)) << differing;
  auto text = run_interprobe({"compare", (dir / "a.json").string(), (dir / "a-slow.json").string()});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("paths over their sizes"), std::string::npos);
  fs::remove_all(dir);
}

TEST(CompareCli, FixtureReportsListTheSettingsThatDiffer) {
  auto p = run_interprobe({"compare", kSeed, kThisVm, "--format", "markdown"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("## settings that differ"), std::string::npos) << p.out.substr(0, 2000);
  // The seed case is 8 GPUs in a Proxmox q35 guest; this VM is a Firecracker microVM without GPUs.
  EXPECT_NE(p.out.find("| virtualization/product | Proxmox VE | Firecracker |"), std::string::npos);
  EXPECT_NE(p.out.find("| virtualization/machine\\_type | q35 | microvm |"), std::string::npos);
  EXPECT_NE(p.out.find("| topology/gpu\\_count | 8 |"), std::string::npos);
  EXPECT_NE(p.out.find("## metrics, regressions first"), std::string::npos);
  json j = compare_json({kSeed, kThisVm});
  bool hypervisor_listed = false;
  for (const auto& d : j["settings"]) {
    EXPECT_NE(d["values"][0], d["values"][1]) << d.dump();  // only what differs
    hypervisor_listed = hypervisor_listed || d["name"] == "virtualization/product";
  }
  EXPECT_TRUE(hypervisor_listed) << j["settings"].dump(1);
}

TEST(CompareCli, GroupsAndBaselineByFileName) {
  json j = compare_json({kSeed + "," + kSeed, kThisVm, "--baseline", kThisVm});
  EXPECT_EQ(j["baseline"], 1);
  EXPECT_EQ(j["runs"][0], 2);
  EXPECT_EQ(j["labels"][0], kSeed + "," + kSeed);
  auto bad = run_interprobe({"compare", kSeed, kThisVm, "--baseline", "other.json"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("other.json"), std::string::npos) << bad.err;
}

TEST(CompareCli, DifferentSchemaMajorsExitTwoNamingBothFiles) {
  fs::path dir = temp_dir();
  for (const char* version : {"3.0.0", "1.0.0"}) {
    json other = load(kSeed);
    other["schema_version"] = version;
    save(dir / "other.json", other);
    auto p = run_interprobe({"compare", kSeed, (dir / "other.json").string()});
    EXPECT_EQ(p.exit_code, 2) << version << " " << p.err;
    EXPECT_NE(p.err.find(kSeed), std::string::npos) << p.err;
    EXPECT_NE(p.err.find((dir / "other.json").string()), std::string::npos) << p.err;
  }
  fs::remove_all(dir);
}

TEST(CompareCli, MissingOrBrokenReportExitsTwoNamingIt) {
  fs::path dir = temp_dir();
  auto missing = run_interprobe({"compare", kSeed, (dir / "nope.json").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.json"), std::string::npos) << missing.err;
  std::ofstream(dir / "broken.json") << "{\"schema_version\": \"2.1.0\", ";
  auto broken = run_interprobe({"compare", (dir / "broken.json").string(), kSeed});
  EXPECT_EQ(broken.exit_code, 2);
  EXPECT_NE(broken.err.find("broken.json"), std::string::npos) << broken.err;
  auto one = run_interprobe({"compare", kSeed});
  EXPECT_EQ(one.exit_code, 2);
  fs::remove_all(dir);
}

// The HTML page: the comparison's tables, and every report's curves on shared charts, each
// series named after its report; one expected line (the baseline's), no script.
TEST(CompareCli, HtmlOverlaysEachReportsCurvesOnSharedCharts) {
  auto p = run_interprobe({"compare", kThisVm, kSeed, "--format", "html"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.out.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(p.out.find("settings that differ"), std::string::npos);
  EXPECT_EQ(p.out.find("<script"), std::string::npos);
  // Both reports hold all-reduce sweeps: one chart carries both, named by their files.
  const auto chart = p.out.find("All-reduce time vs size (out of place)");
  ASSERT_NE(chart, std::string::npos) << p.out.substr(0, 2000);
  EXPECT_NE(p.out.find("this-vm-run.json: mpi default 2 ranks"), std::string::npos);
  EXPECT_NE(p.out.find("report.json: nccl default 8 ranks"), std::string::npos);
  EXPECT_EQ(p.out.find(kThisVm + ":"), std::string::npos) << "legends name files, not their paths";
  // Two reports of one file name keep the names they were given.
  auto same_name = run_interprobe({"compare", kSeed, kSeed, "--format", "html"});
  ASSERT_EQ(same_name.exit_code, 0) << same_name.err;
  EXPECT_NE(same_name.out.find(kSeed + ": nccl default 8 ranks"), std::string::npos);
}

// Issue 36: two single-node reports compare in under 60 lines of default text (the detail is one
// option away), whatever differs between them.
TEST(CompareCli, TwoSingleNodeReportsCompareInUnderSixtyLines) {
  auto dir = temp_dir();
  json slower = load(kThisVm);
  for (auto& s : slower["bandwidth"]["sweeps"])
    for (auto& p : s["points"])
      if (p.contains("gbps") && p["gbps"].is_number()) p["gbps"] = p["gbps"].get<double>() * 0.8;
  save(dir / "slower.json", slower);
  for (const auto& pair : std::vector<std::vector<std::string>>{{kSeed, kThisVm}, {kThisVm, (dir / "slower.json").string()}}) {
    auto p = run_interprobe({"compare", pair[0], pair[1]}, {"COLUMNS=200"});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    auto lines = std::count(p.out.begin(), p.out.end(), '\n');
    EXPECT_LT(lines, 60) << p.out;
    EXPECT_NE(p.out.find("--detail"), std::string::npos);
    auto detail = run_interprobe({"compare", pair[0], pair[1], "--detail"}, {"COLUMNS=200"});
    EXPECT_GT(std::count(detail.out.begin(), detail.out.end(), '\n'), 3 * lines) << "the detail is the full tables";
    EXPECT_NE(detail.out.find("metrics, regressions first"), std::string::npos);
  }
  // The seed case has a collective section this VM lacks: one line says so, not `same`.
  auto p = run_interprobe({"compare", kSeed, kThisVm}, {"COLUMNS=200"});
  EXPECT_NE(p.out.find("only in A"), std::string::npos) << p.out;
  fs::remove_all(dir);
}
