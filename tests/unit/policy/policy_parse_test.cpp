// The policy parser: every error names the file, the item (index and id) and the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "common/errors.hpp"
#include "report/policy/policy.hpp"
#include "report/policy/selector.hpp"

using namespace interprobe::policy;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_policy(text, "site.json");
  } catch (const interprobe::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string with_item(const std::string& item) {
  return R"({"name": "p", "items": [{"id": "ok", "severity": "warn", "metric": "collective/nccl/8B/time_us", "op": "<=", "value": 30}, )" +
         item + "]}";
}

}  // namespace

TEST(PolicySelector, StarStaysInASegmentDoubleStarCrossesThem) {
  auto caps = match_glob("topology/gpus/*/numa_exposed", "topology/gpus/3/numa_exposed");
  ASSERT_TRUE(caps);
  EXPECT_EQ(*caps, std::vector<std::string>{"3"});
  EXPECT_FALSE(match_glob("bandwidth/*/gbps", "bandwidth/cuda/h2d/gbps"));
  auto deep = match_glob("bandwidth/cuda/h2d/**/fit/peak_gbps", "bandwidth/cuda/h2d/node0->gpu1/pinned/fit/peak_gbps");
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->front(), "node0->gpu1/pinned");
  EXPECT_EQ(substitute_captures("bandwidth/cuda/h2d/{1}/expected_gbps", *deep),
            "bandwidth/cuda/h2d/node0->gpu1/pinned/expected_gbps");
  EXPECT_TRUE(match_glob("virt.*", "virt.p2p_clique_missing"));
  EXPECT_FALSE(match_glob("virt.p2p", "virt.p2p_clique_missing"));
  EXPECT_THROW(substitute_captures("x/{2}", {"a"}), std::out_of_range);
}

TEST(PolicyParse, AcceptsEveryItemKind) {
  auto p = parse_policy(R"({"name": "site", "description": "d", "items": [
    {"id": "lat", "severity": "fail", "metric": "collective/nccl/8B/time_us", "op": "<=", "value": 30, "why": "w"},
    {"id": "h2d", "severity": "warn", "metric": "bandwidth/cuda/h2d/**/fit/peak_gbps", "op": ">=",
     "of": "bandwidth/cuda/h2d/{1}/expected_gbps", "factor": 0.85},
    {"id": "q35", "severity": "fail", "fact": "virtualization/machine_type", "op": "==", "value": "q35"},
    {"id": "numa", "severity": "warn", "fact": "topology/gpus/*/numa_exposed", "op": "==", "value": true, "for": "all"},
    {"id": "clique", "severity": "fail", "finding": "virt.p2p_clique_missing", "expect": "absent"},
    {"id": "verdict", "severity": "warn", "bottleneck": "communication", "op": "!=", "batch": 64, "tp": 8}]})",
                        "site.json");
  ASSERT_EQ(p.items.size(), 6u);
  EXPECT_EQ(p.items[1].of, "bandwidth/cuda/h2d/{1}/expected_gbps");
  EXPECT_DOUBLE_EQ(p.items[1].factor, 0.85);
  EXPECT_EQ(std::get<std::string>(p.items[2].value), "q35");
  EXPECT_EQ(std::get<bool>(p.items[3].value), true);
  EXPECT_EQ(p.items[4].kind, ItemKind::finding);
  EXPECT_EQ(p.items[5].batch, 64);
  EXPECT_EQ(p.items[5].selector, "*");
  auto probes = probes_needed(p);
  EXPECT_EQ(probes, (std::vector<std::string>{"system", "topology", "virtualization", "bandwidth", "collective", "compute"}));
}

TEST(PolicyParse, ProbesNeededAreOnlyThoseItsItemsRead) {
  auto p = parse_policy(R"({"name": "s", "items": [
    {"id": "clique", "severity": "fail", "finding": "virt.p2p_clique_missing"},
    {"id": "numa", "severity": "warn", "fact": "topology/gpus/*/numa_exposed", "op": "==", "value": true}]})",
                        "s.json");
  EXPECT_EQ(probes_needed(p), (std::vector<std::string>{"system", "topology", "virtualization"}));
}

TEST(PolicyParse, ErrorsNameFileItemAndKey) {
  struct Case {
    std::string item, key, says;
  };
  std::vector<Case> cases{
      {R"({"id": "x", "severity": "warn", "metric": "collective/nccl/8B/time_us", "op": "=<", "value": 30})", "op", "unknown operator"},
      {R"({"id": "x", "metric": "collective/nccl/8B/time_us", "op": "<=", "value": 30})", "severity", "required"},
      {R"({"id": "x", "severity": "error", "metric": "collective/nccl/8B/time_us", "op": "<=", "value": 30})", "severity", "warn or fail"},
      {R"({"id": "x", "severity": "warn", "metric": "collective/nccl/8B/time_us", "op": "<=", "value": "30"})", "value", "number"},
      {R"({"id": "x", "severity": "warn", "metric": "colective/nccl/8B/time_us", "op": "<=", "value": 30})", "metric", "no section"},
      {R"({"id": "x", "severity": "warn", "metric": "bandwidth/*/gbps", "op": ">=", "of": "bandwidth/{2}/x_gbps"})", "of", "{2}"},
      {R"({"id": "x", "severity": "warn", "metric": "bandwidth/*/gbps", "op": ">=", "of": "bandwidth/*/x_gbps"})", "of", "one metric"},
      {R"({"id": "x", "severity": "warn", "metric": "bandwidth/a/gbps", "op": ">=", "value": 1, "factor": 2})", "factor", "only with of"},
      {R"({"id": "x", "severity": "warn", "fact": "virtualization/machine_type", "op": ">", "value": "q35"})", "op", "== or !="},
      {R"({"id": "x", "severity": "warn", "finding": "virt.p2p_clique_mising"})", "finding", "names no finding"},
      {R"({"id": "x", "severity": "warn", "finding": "virt.p2p_clique_missing", "expect": "gone"})", "expect", "absent or present"},
      {R"({"id": "x", "severity": "warn", "bottleneck": "network", "op": "!=", "batch": 64})", "bottleneck", "communication"},
      {R"({"id": "x", "severity": "warn", "bottleneck": "communication", "op": "!=", "batch": 0})", "batch", "positive"},
      {R"({"id": "x", "severity": "warn", "bottleneck": "communication", "op": "!="})", "batch", "missing"},
      {R"({"id": "x", "severity": "warn", "fact": "virtualization/machine_type", "op": "==", "value": "q35", "treshold": 1})", "treshold", "unknown key"},
      {R"({"id": "x", "severity": "warn", "fact": "topology/gpus/*/numa_exposed", "op": "==", "value": true, "for": "most"})", "for", "all or any"},
      {R"({"id": "ok", "severity": "warn", "fact": "virtualization/machine_type", "op": "==", "value": "q35"})", "id", "unique"},
      {R"({"id": "a b", "severity": "warn", "fact": "virtualization/machine_type", "op": "==", "value": "q35"})", "id", "letters"},
  };
  for (const auto& c : cases) {
    std::string e = error_of(with_item(c.item));
    EXPECT_NE(e.find("policy site.json: item 2"), std::string::npos) << c.item << "\n -> " << e;
    EXPECT_NE(e.find("key \"" + c.key + "\""), std::string::npos) << c.item << "\n -> " << e;
    EXPECT_NE(e.find(c.says), std::string::npos) << c.item << "\n -> " << e;
  }
  // The id is named when the item has one.
  EXPECT_NE(error_of(with_item(cases.front().item)).find("(id \"x\")"), std::string::npos);
  // Two kinds in one item, or none.
  EXPECT_NE(error_of(with_item(R"({"id": "x", "severity": "warn", "fact": "a", "finding": "virt.vgpu"})")).find("exactly one of"),
            std::string::npos);
}

TEST(PolicyParse, TopLevelErrorsNameTheKey) {
  EXPECT_NE(error_of("{nope").find("policy site.json: not valid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"items": []})").find("key \"name\""), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "p", "items": []})").find("key \"items\""), std::string::npos);
  EXPECT_NE(error_of(R"({"name": "p", "item": []})").find("key \"item\": unknown key"), std::string::npos);
  EXPECT_NE(error_of(R"([1, 2])").find("JSON object"), std::string::npos);
  // A number beyond double range (found by fuzzing the trace reader, the same parser call here).
  EXPECT_NE(error_of(R"({"name": "p", "items": [{"id": "x", "severity": "warn", "value": 1e999}]})").find("not valid JSON"),
            std::string::npos);
}

TEST(PolicyParse, EveryPresetParses) {
  namespace fs = std::filesystem;
  int presets = 0;
  for (const auto& entry : fs::directory_iterator(std::string(INTERPROBE_SOURCE_DIR) + "/examples/policies")) {
    if (entry.path().extension() != ".json") continue;
    ++presets;
    Policy p = read_policy_file(entry.path());
    EXPECT_FALSE(p.items.empty()) << entry.path();
    for (const auto& it : p.items) EXPECT_FALSE(it.why.empty()) << entry.path() << " " << it.id << ": every preset item says why";
  }
  EXPECT_EQ(presets, 3);
}

TEST(PolicyParse, KnownFindingIdsComeFromTheSchema) {
  const auto& ids = known_finding_ids();
  EXPECT_GT(ids.size(), 30u);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "virt.p2p_clique_missing"), ids.end());
}
