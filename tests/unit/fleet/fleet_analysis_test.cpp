// The fleet analysis (report/fleet/): the modified z-score against hand calculations, the
// outlier scan and the settings majority over copies of a real report, and the JSON round trip.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "report/fleet/fleet.hpp"
#include "model/json.hpp"
#include "report/policy/fleet_check.hpp"
#include "report/policy/policy.hpp"

namespace fl = interprobe::fleet;
namespace rp = interprobe::report;

namespace {

rp::Report base_report() { return rp::read_report_file(std::string(INTERPROBE_SOURCE_DIR) + "/examples/reports/this-vm-run.json"); }

// The report with its host memcpy peak set to `peak_gbps` and its machine type to `machine`.
fl::FleetNode node(const std::string& name, double peak_gbps, const std::string& machine) {
  rp::Report r = base_report();
  for (auto& s : r.bandwidth->sweeps)
    if (s.kind == rp::CopyKind::memcpy && s.fit) s.fit->peak_gbps = peak_gbps;
  r.virtualization->machine_type = machine;
  fl::FleetNode n;
  n.name = name;
  n.ranks = {static_cast<std::int64_t>(name.back() - '0')};
  n.status = fl::NodeStatus::ok;
  n.report = std::move(r);
  return n;
}

// The fit peak of the host sweep of `kind` ("memcpy", "staged").
const fl::MetricOutliers* metric(const fl::FleetReport& f, const std::string& kind) {
  const std::string tail = "/fit/peak_gbps";
  for (const auto& m : f.outliers)
    if (m.path.rfind("bandwidth/host/" + kind + "/", 0) == 0 && m.path.size() > tail.size() &&
        m.path.compare(m.path.size() - tail.size(), tail.size(), tail) == 0)
      return &m;
  return nullptr;
}

}  // namespace

TEST(RobustZ, MadScoresByHand) {
  // median 24.0; |x - median| = 0, 0.5, 18 -> MAD 0.5; z(6.0) = 0.6745 * -18 / 0.5 = -24.282
  auto s = fl::robust_z_scores({24.0, 24.5, 6.0});
  EXPECT_DOUBLE_EQ(s.median, 24.0);
  EXPECT_DOUBLE_EQ(s.mad, 0.5);
  EXPECT_EQ(s.scale, fl::Scale::mad);
  ASSERT_EQ(s.z.size(), 3u);
  EXPECT_NEAR(*s.z[0], 0.0, 1e-12);
  EXPECT_NEAR(*s.z[1], 0.6745, 1e-12);
  EXPECT_NEAR(*s.z[2], -24.282, 1e-9);
}

TEST(RobustZ, EvenCountTakesTheMeanOfTheMiddleTwo) {
  // median (2+3)/2 = 2.5; deviations 1.5 0.5 0.5 7.5 -> MAD (0.5+1.5)/2 = 1.0; z(10) = 0.6745*7.5 = 5.05875
  auto s = fl::robust_z_scores({1, 2, 3, 10});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mad, 1.0);
  EXPECT_NEAR(*s.z[3], 5.05875, 1e-12);
}

TEST(RobustZ, MadZeroFallsBackToTheMeanAbsoluteDeviation) {
  // median 10, MAD 0; MeanAD = 10/5 = 2; z(20) = 10 / (1.253314 * 2) = 3.98942 > 3.5
  auto s = fl::robust_z_scores({10, 10, 10, 10, 20});
  EXPECT_DOUBLE_EQ(s.mad, 0);
  EXPECT_EQ(s.scale, fl::Scale::mean_absolute_deviation);
  EXPECT_DOUBLE_EQ(s.mean_absolute_deviation, 2.0);
  EXPECT_NEAR(*s.z[4], 3.98942, 1e-5);
  EXPECT_NEAR(*s.z[0], 0, 1e-12);
  // MeanAD = 6/4 = 1.5; z(16) = 6 / 1.879971 = 3.191539: not past 3.5
  auto t = fl::robust_z_scores({10, 10, 10, 16});
  EXPECT_NEAR(*t.z[3], 3.191539, 1e-6);
}

TEST(RobustZ, EqualValuesHaveNoScaleAndNoScore) {
  auto s = fl::robust_z_scores({7, 7, 7});
  EXPECT_EQ(s.scale, fl::Scale::none);
  for (const auto& z : s.z) EXPECT_FALSE(z.has_value());
  EXPECT_TRUE(fl::robust_z_scores({}).z.empty());
}

TEST(FleetAnalysis, ASlowNodeIsAnOutlierAndTheOddMachineTypeIsListed) {
  fl::FleetReport f;
  f.nodes = {node("node0", 24.0, "q35"), node("node1", 24.5, "q35"), node("node2", 6.0, "i440fx")};
  fl::analyze(f);
  const auto* m = metric(f, "memcpy");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->scale, fl::Scale::mad);
  EXPECT_DOUBLE_EQ(m->median, 24.0);
  EXPECT_EQ(m->outliers, std::vector<std::string>{"node2"});
  EXPECT_NEAR(*m->values[2].z, -24.282, 1e-9);
  // Every copy has the same staged fit: scored, no spread, no outlier.
  const auto* staged = metric(f, "staged");
  ASSERT_NE(staged, nullptr);
  EXPECT_EQ(staged->scale, fl::Scale::none);
  EXPECT_TRUE(staged->outliers.empty());
  bool listed = false;
  for (const auto& h : f.heterogeneity)
    if (h.name == "virtualization/machine_type") {
      listed = true;
      EXPECT_EQ(h.majority.value_or(""), "q35");
      EXPECT_EQ(h.majority_nodes, 2);
      ASSERT_EQ(h.differing.size(), 1u);
      EXPECT_EQ(h.differing[0].node, "node2");
      EXPECT_EQ(h.differing[0].value, "i440fx");
    }
  EXPECT_TRUE(listed);
  for (const auto& h : f.heterogeneity) EXPECT_NE(h.name.rfind("findings/", 0), 0u) << h.name;  // results, not settings
}

TEST(FleetAnalysis, TwoNodesAreNeverScoredAndHaveNoMajority) {
  fl::FleetReport f;
  f.nodes = {node("node0", 24.0, "q35"), node("node1", 6.0, "i440fx")};
  fl::analyze(f);
  const auto* m = metric(f, "memcpy");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->scale, fl::Scale::none);  // |z| <= 0.6745 with two values: not worth a score
  EXPECT_TRUE(m->outliers.empty());
  ASSERT_FALSE(f.heterogeneity.empty());
  for (const auto& h : f.heterogeneity)
    if (h.name == "virtualization/machine_type") {
      EXPECT_FALSE(h.majority);
      EXPECT_EQ(h.differing.size(), 2u);
    }
}

TEST(FleetAnalysis, AFailedNodeIsLeftOutOfTheStatistics) {
  fl::FleetReport f;
  f.nodes = {node("node0", 24.0, "q35"), node("node1", 24.5, "q35"), node("node2", 6.0, "q35")};
  f.nodes.push_back({"node3", {3}, fl::NodeStatus::failed, "probe crashed", std::nullopt});
  fl::analyze(f);
  const auto* m = metric(f, "memcpy");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->values.size(), 3u);
  EXPECT_TRUE(f.heterogeneity.empty());
}

TEST(FleetJson, RoundTripsAndRefusesWhatIsNotAFleetReport) {
  fl::FleetReport f;
  f.ranks = 4;
  f.nodes = {node("node0", 24.0, "q35"), node("node1", 24.5, "q35"), node("node2", 6.0, "i440fx")};
  f.nodes.push_back({"node3", {3}, fl::NodeStatus::failed, "probe crashed", std::nullopt});
  f.collective = {4, 2, base_report().collective, std::nullopt, {"a note"}};
  fl::analyze(f);
  auto j = fl::fleet_to_json(f);
  auto back = fl::fleet_from_json(nlohmann::json::parse(j.dump()), "f.json");
  EXPECT_EQ(fl::fleet_to_json(back), j);
  EXPECT_EQ(back.nodes[3].failure.value_or(""), "probe crashed");
  EXPECT_TRUE(back.collective.section);
  EXPECT_THROW(fl::fleet_from_json(nlohmann::json::parse(R"({"schema_version":"2.2.0"})"), "r.json"), interprobe::InputError);
  j["nodes"][0]["ranks"] = "zero";
  EXPECT_THROW(fl::fleet_from_json(j, "bad.json"), interprobe::InputError);
  // From text: a number beyond double range is an error naming the file and the key.
  std::string text = fl::fleet_to_json(back).dump();
  auto at = text.find("\"gather_s\":");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 11, "1e999,\"was\":");
  try {
    (void)fl::parse_fleet_text(text, "big.json");
    ADD_FAILURE() << "1e999 read";
  } catch (const interprobe::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("big.json: timing.gather_s"), std::string::npos) << e.what();
  }
}

namespace {

interprobe::policy::Policy policy_of(const std::string& items) {
  return interprobe::policy::parse_policy(R"({"name": "site", "items": [)" + items + "]}", "p.json");
}

}  // namespace

TEST(FleetPolicy, FleetItemsParseAndSayWhatIsWrong) {
  auto p = policy_of(R"({"id": "o", "severity": "warn", "fleet": "no_outliers", "metric": "bandwidth/**/fit/peak_gbps"},
                        {"id": "h", "severity": "fail", "fleet": "homogeneous"})");
  ASSERT_EQ(p.items.size(), 2u);
  EXPECT_EQ(p.items[0].kind, interprobe::policy::ItemKind::fleet);
  EXPECT_EQ(p.items[0].selector, "bandwidth/**/fit/peak_gbps");
  EXPECT_EQ(p.items[1].selector, "**");
  auto message = [](const std::string& items) {
    try {
      policy_of(items);
    } catch (const interprobe::InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(R"({"id": "x", "severity": "warn", "fleet": "no_outliers"})").find("metric"), std::string::npos);
  EXPECT_NE(message(R"({"id": "x", "severity": "warn", "fleet": "fastest"})").find("no_outliers, no_failed_nodes, homogeneous"),
            std::string::npos);
  EXPECT_NE(message(R"({"id": "x", "severity": "warn", "fleet": "no_failed_nodes", "setting": "a"})").find("only with homogeneous"),
            std::string::npos);
}

TEST(FleetPolicy, NodesGetTheMachineItemsAndTheFleetItsOwn) {
  fl::FleetReport f;
  f.nodes = {node("node0", 24.0, "q35"), node("node1", 24.5, "q35"), node("node2", 6.0, "i440fx")};
  f.nodes.push_back({"node3", {3}, fl::NodeStatus::failed, "probe crashed", std::nullopt});
  fl::analyze(f);
  auto p = policy_of(R"({"id": "o", "severity": "fail", "fleet": "no_outliers", "metric": "bandwidth/host/memcpy/**/fit/peak_gbps"},
                        {"id": "f", "severity": "fail", "fleet": "no_failed_nodes"},
                        {"id": "h", "severity": "warn", "fleet": "homogeneous", "setting": "virtualization/machine_type"},
                        {"id": "q35", "severity": "fail", "fact": "virtualization/machine_type", "op": "==", "value": "q35"})");
  auto suites = interprobe::policy::check_fleet(p, f);
  ASSERT_EQ(suites.size(), 5u);
  EXPECT_EQ(suites[0].name, "fleet");
  ASSERT_EQ(suites[0].result.items.size(), 3u);
  using interprobe::policy::Outcome;
  EXPECT_EQ(suites[0].result.items[0].outcome, Outcome::fail);
  EXPECT_NE(suites[0].result.items[0].detail.find("node2"), std::string::npos);
  EXPECT_EQ(suites[0].result.items[1].outcome, Outcome::fail);  // node3
  EXPECT_EQ(suites[0].result.items[2].outcome, Outcome::warn);  // node2 on i440fx
  EXPECT_EQ(suites[1].result.items.size(), 1u);                 // the fact item only
  EXPECT_EQ(suites[1].result.items[0].outcome, Outcome::pass);
  EXPECT_EQ(suites[3].result.items[0].outcome, Outcome::fail);  // i440fx
  EXPECT_EQ(suites[4].result.items[0].item.id, "node_probed");
  EXPECT_EQ(suites[4].result.items[0].detail, "probe crashed");
}
