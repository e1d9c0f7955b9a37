// `mpirun -np N interprobe fleet` (issue 20): two ranks as two nodes (--rank-as-node), ranks of
// one machine measured once, a planted outlier (one rank fed a scaled copy of a real report), a
// planted heterogeneity (a different machine type from a --root fixture per rank), a failed node,
// and the time the gathering and analysis add. Skipped when this build has no MPI launcher.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>

#include <nlohmann/json.hpp>

#include "support/mpiexec.hpp"
#include "support/run_binary.hpp"
#include "support/schema_check.hpp"
#include "support/temp_tree.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using interprobe::testing::kMpiexec;

json read_json(const fs::path& file) {
  std::ifstream in(file);
  return json::parse(in);
}

std::vector<std::string> fleet_args(int ranks, std::vector<std::string> args) {
  // Sweeps up to 4 MiB: two ranks share two cores, and the plateau adds nothing to these tests.
  std::vector<std::string> all{"-np", std::to_string(ranks), INTERPROBE_BINARY, "fleet", "-q", "--max-size", "4M"};
  all.insert(all.end(), args.begin(), args.end());
  return all;
}

// The example report of this VM with every host memcpy rate (points and fit) times `scale`.
fs::path scaled_report(const fs::path& dir, const std::string& name, double scale) {
  json r = read_json(fs::path(INTERPROBE_SOURCE_DIR) / "examples/reports/this-vm-run.json");
  for (auto& s : r["bandwidth"]["sweeps"]) {
    if (s["kind"] != "memcpy") continue;
    for (auto& p : s["points"]) p["gbps"] = p["gbps"].get<double>() * scale;
    if (!s["fit"].is_null()) s["fit"]["peak_gbps"] = s["fit"]["peak_gbps"].get<double>() * scale;
  }
  fs::path file = dir / name;
  std::ofstream(file) << r.dump();
  return file;
}

const json* outliers_of(const json& fleet, const std::string& prefix, const std::string& suffix) {
  for (const auto& m : fleet["outliers"]) {
    std::string path = m["path"];
    if (path.rfind(prefix, 0) == 0 && path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
      return &m;
  }
  return nullptr;
}

}  // namespace

TEST(FleetMpi, TwoRanksAsTwoNodesGiveATwoNodeFleetReportWithTheAllreduceAcrossThem) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  interprobe::testing::TempTree tree;
  auto file = tree.path() / "fleet.json";
  auto p = interprobe::testing::mpiexec(kMpiexec, fleet_args(2, {"--rank-as-node", "--only", "bandwidth,collective", "-o", file.string()}), 240);
  std::cout << "mpirun -np 2 interprobe fleet --rank-as-node --only bandwidth,collective took " << p.seconds << " s\n";
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("2 (2 ok, 0 failed) from 2 ranks"), std::string::npos) << p.out;
  json f = read_json(file);
  ASSERT_EQ(f["nodes"].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(f["nodes"][i]["name"], "rank " + std::to_string(i));
    EXPECT_EQ(f["nodes"][i]["status"], "ok");
    EXPECT_EQ(f["nodes"][i]["report"]["schema_version"].get<std::string>().substr(0, 2), "2.");
  }
  EXPECT_FALSE(f["headline_paths"].empty());
  // The MPI all-reduce across both ranks, checked element by element.
  ASSERT_FALSE(f["collective"]["section"].is_null()) << f["collective"]["reason"];
  const auto& sweep = f["collective"]["section"]["allreduce"][0];
  EXPECT_EQ(sweep["backend"], "mpi");
  EXPECT_EQ(sweep["ranks"], 2);
  EXPECT_EQ(sweep["summary"]["wrong_elements_total"], 0);
  EXPECT_NE(p.out.find("MPI does not report the transport"), std::string::npos);
  EXPECT_NE(p.out.find("NCCL across the ranks: not measured"), std::string::npos) << p.out;  // no GPU here
  // What the fleet adds to the nodes' own probing: the issue asks for under 5 s.
  const double added = f["timing"]["gather_s"].get<double>() + f["timing"]["analysis_s"].get<double>();
  std::cout << "gather " << f["timing"]["gather_s"] << " s + analysis " << f["timing"]["analysis_s"] << " s = " << added << " s\n";
  EXPECT_LT(added, 5.0);
  interprobe::testing::expect_fleet_schema_valid(file);
}

TEST(FleetMpi, SimulatedGpusAddTheNcclAllreduceAcrossTheRanks) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  interprobe::testing::TempTree tree;
  auto machine = tree.path() / "machine.json";
  std::ofstream(machine) << R"({"devices": [{}, {}]})";
  auto file = tree.path() / "fleet.json";
  auto p = interprobe::testing::mpiexec(kMpiexec, fleet_args(2, {"--rank-as-node", "--only", "collective", "-o", file.string()}), 240,
                                        {std::string("INTERPROBE_CUDA_LIB=") + INTERPROBE_SIM_CUDA,
                                         std::string("INTERPROBE_NCCL_LIB=") + INTERPROBE_SIM_NCCL,
                                         "INTERPROBE_SIM_CONFIG=" + machine.string()});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  json f = read_json(file);
  ASSERT_FALSE(f["collective"]["section"].is_null()) << f["collective"]["reason"];
  std::map<std::string, json> by_backend;
  for (const auto& s : f["collective"]["section"]["allreduce"]) by_backend[s["backend"]] = s;
  ASSERT_EQ(by_backend.count("mpi"), 1u) << f["collective"].dump();
  ASSERT_EQ(by_backend.count("nccl"), 1u) << f["collective"].dump();
  EXPECT_EQ(by_backend["nccl"]["ranks"], 2);
  EXPECT_EQ(by_backend["nccl"]["summary"]["wrong_elements_total"], 0);
  EXPECT_NE(p.out.find("NCCL across the ranks: one GPU per rank"), std::string::npos) << p.out;
  // Each node's own report keeps its NCCL sweep over its two simulated GPUs.
  EXPECT_EQ(f["nodes"][0]["report"]["collective"]["allreduce"][0]["backend"], "nccl");
  interprobe::testing::expect_fleet_schema_valid(file);
}

TEST(FleetMpi, RanksOfOneMachineAreOneNodeMeasuredOnce) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  auto p = interprobe::testing::mpiexec(kMpiexec, fleet_args(2, {"--only", "system", "--json"}), 120);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  json f = json::parse(p.out);
  ASSERT_EQ(f["nodes"].size(), 1u);
  EXPECT_EQ(f["nodes"][0]["ranks"], json::array({0, 1}));
  EXPECT_EQ(f["nodes"][0]["status"], "ok");
  EXPECT_EQ(f["ranks"], 2);
  EXPECT_EQ(f["rank_as_node"], false);
}

TEST(FleetMpi, AScaledNodeIsAnOutlier) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  interprobe::testing::TempTree tree;
  std::string reports = scaled_report(tree.path(), "r0.json", 1.0).string() + "," +
                        scaled_report(tree.path(), "r1.json", 1.02).string() + "," +
                        scaled_report(tree.path(), "r2.json", 0.25).string();
  auto file = tree.path() / "fleet.json";
  auto p = interprobe::testing::mpiexec(
      kMpiexec, fleet_args(3, {"--rank-as-node", "--node-report-per-rank", reports, "-o", file.string()}), 120);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  json f = read_json(file);
  const json* m = outliers_of(f, "bandwidth/host/memcpy/", "/fit/peak_gbps");
  ASSERT_NE(m, nullptr) << f["headline_paths"];
  EXPECT_EQ((*m)["outliers"], json::array({"rank 2"}));
  EXPECT_EQ((*m)["scale"], "mad");
  // median p, MAD 0.02 p: z = 0.6745 * (0.25 - 1) / 0.02 = -25.29
  EXPECT_NEAR((*m)["values"][2]["z"].get<double>(), -25.29, 0.01);
  EXPECT_FALSE((*m)["values"][0]["outlier"].get<bool>());
  // The staged sweep was not scaled: the same on every node, no outlier.
  const json* staged = outliers_of(f, "bandwidth/host/staged/", "/fit/peak_gbps");
  ASSERT_NE(staged, nullptr);
  EXPECT_TRUE((*staged)["outliers"].empty());
  EXPECT_NE(p.out.find("rank 2"), std::string::npos);
  EXPECT_NE(p.out.find("outlier nodes"), std::string::npos);
  interprobe::testing::expect_fleet_schema_valid(file);

  auto policy = tree.path() / "p.json";
  std::ofstream(policy) << R"({"name": "site", "items": [{"id": "memcpy-outliers", "severity": "fail",
    "fleet": "no_outliers", "metric": "bandwidth/host/memcpy/**/fit/peak_gbps"}]})";
  auto c = interprobe::testing::run_interprobe({"check", "--policy", policy.string(), file.string(), "--json"});
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  json result = json::parse(c.out);
  EXPECT_FALSE(result["passed"].get<bool>());
  ASSERT_EQ(result["suites"].size(), 4u);
  EXPECT_EQ(result["suites"][0]["suite"], "fleet");
  EXPECT_EQ(result["suites"][0]["items"][0]["outcome"], "fail");
  EXPECT_NE(result["suites"][0]["items"][0]["detail"].get<std::string>().find("rank 2 on bandwidth/host/memcpy/"), std::string::npos);
  // `report` reads one machine's report and says where a fleet report goes.
  auto r = interprobe::testing::run_interprobe({"report", file.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("a fleet report"), std::string::npos) << r.err;
  // A fleet item on one machine's report is not measured, never passed.
  auto one = interprobe::testing::run_interprobe({"check", "--policy", policy.string(), (tree.path() / "r0.json").string()});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("SKIPPED"), std::string::npos) << one.out;
}

TEST(FleetMpi, AnOddMachineTypeIsListedAndAFailedNodeIsReported) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  interprobe::testing::TempTree tree;
  const std::string virt = std::string(INTERPROBE_FIXTURES) + "/virt/";
  const std::string roots = virt + "proxmox-kvm-q35," + virt + "proxmox-kvm-q35," + virt + "qemu-tcg-i440fx," +
                            (tree.path() / "no-such-root").string();
  auto file = tree.path() / "fleet.json";
  auto p = interprobe::testing::mpiexec(
      kMpiexec,
      fleet_args(4, {"--rank-as-node", "--only", "system,topology,virtualization", "--root-per-rank", roots, "-o", file.string()}),
      120);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  json f = read_json(file);
  ASSERT_EQ(f["nodes"].size(), 4u);
  EXPECT_EQ(f["nodes"][3]["status"], "failed");
  EXPECT_TRUE(f["nodes"][3]["report"].is_null());
  EXPECT_NE(f["nodes"][3]["failure"].get<std::string>().find("no-such-root"), std::string::npos) << f["nodes"][3]["failure"];
  EXPECT_NE(p.err.find("node rank 3 failed"), std::string::npos) << p.err;
  bool listed = false;
  for (const auto& h : f["heterogeneity"])
    if (h["name"] == "virtualization/machine_type") {
      listed = true;
      EXPECT_EQ(h["majority"], "q35");
      EXPECT_EQ(h["majority_nodes"], 2);
      EXPECT_EQ(h["differing"], json::array({{{"node", "rank 2"}, {"value", "i440fx"}}}));
    }
  EXPECT_TRUE(listed) << f["heterogeneity"].dump();
  EXPECT_EQ(f["collective"]["section"], nullptr);  // replayed trees: nothing live to sweep
  interprobe::testing::expect_fleet_schema_valid(file);

  // check: the policy on every node, its fleet items once; JUnit with one testsuite per node.
  auto policy = tree.path() / "p.json";
  std::ofstream(policy) << R"({"name": "site", "items": [
    {"id": "all-probed", "severity": "fail", "fleet": "no_failed_nodes"},
    {"id": "same-machine", "severity": "warn", "fleet": "homogeneous", "setting": "virtualization/machine_type"},
    {"id": "q35", "severity": "fail", "fact": "virtualization/machine_type", "op": "==", "value": "q35"}]})";
  auto junit = tree.path() / "check.xml";
  auto c = interprobe::testing::run_interprobe({"check", "--policy", policy.string(), file.string(), "--junit", junit.string()});
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  EXPECT_NE(c.out.find("rank 2: site"), std::string::npos) << c.out;
  std::ifstream in(junit);
  std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t suites = 0;
  for (auto at = xml.find("<testsuite name="); at != std::string::npos; at = xml.find("<testsuite name=", at + 1)) ++suites;
  EXPECT_EQ(suites, 5u) << xml;  // the fleet's, then four nodes'
  EXPECT_NE(xml.find("<testsuite name=\"fleet\" tests=\"2\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testsuite name=\"rank 0\" tests=\"1\" failures=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testsuite name=\"rank 2\" tests=\"1\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase name=\"node_probed\" classname=\"interprobe.check.rank 3\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("no-such-root"), std::string::npos) << xml;
}

TEST(FleetMpi, AReportOverTheGatherLimitIsAFailedNodeNotACrash) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  interprobe::testing::TempTree tree;
  json r = read_json(fs::path(INTERPROBE_SOURCE_DIR) / "examples/reports/this-vm-run.json");
  auto small = tree.path() / "small.json", big = tree.path() / "big.json";
  std::ofstream(small) << r.dump();
  r["host"]["kernel"] = std::string(17u << 20, 'k');  // past the 16 MiB a node may send
  std::ofstream(big) << r.dump();
  auto p = interprobe::testing::mpiexec(
      kMpiexec, fleet_args(2, {"--rank-as-node", "--node-report-per-rank", small.string() + "," + big.string(), "--json"}), 120);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  json f = json::parse(p.out);
  EXPECT_EQ(f["nodes"][0]["status"], "ok");
  EXPECT_EQ(f["nodes"][1]["status"], "failed");
  EXPECT_NE(f["nodes"][1]["failure"].get<std::string>().find("over the 16777216 bytes a node may send"), std::string::npos)
      << f["nodes"][1]["failure"];
}

TEST(FleetMpi, AListNotOfOneEntryPerRankEndsEveryRankWithExit2) {
  if (kMpiexec.empty()) GTEST_SKIP() << "no mpirun in this build";
  auto p = interprobe::testing::mpiexec(kMpiexec, fleet_args(2, {"--root-per-rank", "/a,/b,/c"}), 60);
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("--root-per-rank: 3 entries for 2 ranks"), std::string::npos) << p.err;
}

TEST(Fleet, WithoutALauncherTheMachineIsAFleetOfOne) {
  interprobe::testing::TempTree tree;
  auto p = interprobe::testing::run_interprobe({"fleet", "--only", "system,virtualization", "--root",
                                                std::string(INTERPROBE_FIXTURES) + "/virt/proxmox-kvm-q35", "--format", "markdown", "-q"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("1 (1 ok, 0 failed) from 1 ranks"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("one rank: an all-reduce across the fleet needs two or more"), std::string::npos) << p.out;
  auto bad = interprobe::testing::run_interprobe({"fleet", "--format", "html"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("text, markdown or json"), std::string::npos) << bad.err;
}

// --fail-on gates a fleet as it gates one machine: any node's finding at or above it, or a node
// that sent no report, is exit 1 after the fleet report is written (the seed case's worst finding
// is a warn: its emulated root port is slower than the GPU).
TEST(Fleet, FailOnGatesOnEveryNodesFindingsAndOnANodeWithoutAReport) {
  interprobe::testing::TempTree tree;
  const std::string seed = std::string(INTERPROBE_SOURCE_DIR) + "/tests/fixtures/seed-case/report.json";
  auto fleet_with = [&](const std::string& node_report, std::vector<std::string> extra) {
    std::vector<std::string> args{"fleet", "--node-report-per-rank", node_report, "-q", "-o", (tree.path() / "f.json").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    fs::remove(tree.path() / "f.json");
    return interprobe::testing::run_interprobe(args);
  };
  auto warn = fleet_with(seed, {"--fail-on", "warn"});
  EXPECT_EQ(warn.exit_code, 1) << warn.err;
  EXPECT_NE(warn.err.find("--fail-on warn: 1 finding(s) at or above it: "), std::string::npos) << warn.err;
  EXPECT_NE(warn.err.find(": virt.emulated_port_slower_than_gpu (warn)"), std::string::npos) << warn.err;
  EXPECT_TRUE(fs::exists(tree.path() / "f.json")) << "the fleet report comes first";
  EXPECT_EQ(fleet_with(seed, {"--fail-on", "fail"}).exit_code, 0);
  EXPECT_EQ(fleet_with(seed, {}).exit_code, 0);

  const std::string missing = (tree.path() / "no-such-report.json").string();
  auto silent = fleet_with(missing, {"--fail-on", "fail"});
  EXPECT_EQ(silent.exit_code, 1) << silent.err;
  EXPECT_NE(silent.err.find("0 finding(s) at or above it; 1 node(s) sent no report: "), std::string::npos) << silent.err;
  EXPECT_TRUE(fs::exists(tree.path() / "f.json"));
  EXPECT_EQ(fleet_with(missing, {}).exit_code, 0) << "without --fail-on a failed node is reported, exit 0";
}
