// The fleet report's JSON from its declarations (report/fleet/fleet_json.cpp): the committed
// schema is the generated one, files the earlier hand-written codec wrote read and write back
// unchanged, and a wrong shape is an error naming its key path.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "model/json.hpp"
#include "report/fleet/fleet.hpp"

namespace fl = interprobe::fleet;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kSource = INTERPROBE_SOURCE_DIR;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The message fleet_from_json gives `doc`, or "accepted".
std::string read_error(const json& doc) {
  try {
    (void)fl::fleet_from_json(doc, "f.json");
  } catch (const interprobe::InputError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST(FleetSchema, TheCommittedSchemaIsTheGeneratedOne) {
  const fs::path file = kSource / "report/schema/fleet.schema.json";
  const json generated = fl::generated_fleet_schema();
  if (const char* regenerate = std::getenv("INTERPROBE_REGENERATE_SCHEMA"); regenerate && std::string(regenerate) == "1")
    std::ofstream(file, std::ios::binary) << generated.dump(2) << "\n";
  const json committed = json::parse(read_text(file));
  EXPECT_EQ(committed, generated)
      << file.string() << " is not what the INTERPROBE_JSON declarations and the overlay in report/fleet/fleet_json.cpp give; "
      << "regenerate it: INTERPROBE_REGENERATE_SCHEMA=1 ctest --test-dir build -R FleetSchema";
}

TEST(FleetSchema, TheGeneratedSchemaSaysWhatTheTypesSay) {
  const json schema = fl::generated_fleet_schema();
  const json& defs = schema.at("$defs");
  EXPECT_EQ(schema.at("properties").at("nodes"), (json{{"type", "array"}, {"items", {{"$ref", "#/$defs/fleet_node"}}}}));
  EXPECT_EQ(defs.at("fleet_node").at("properties").at("status"), (json{{"enum", {"ok", "failed"}}}));
  EXPECT_EQ(defs.at("fleet_node").at("properties").at("report").at("type"), (json{"object", "null"}));
  EXPECT_EQ(defs.at("metric_outliers").at("properties").at("better"), (json{{"enum", {"higher", "lower", "neither"}}}));
  EXPECT_EQ(defs.at("metric_outliers").at("properties").at("scale"), (json{{"enum", {"mad", "mean_absolute_deviation", "none"}}}));
  EXPECT_EQ(defs.at("node_value").at("properties").at("z"), (json{{"type", {"number", "null"}}}));
  // The overlay's bounds are merged into the generated members, not beside them.
  EXPECT_EQ(defs.at("fleet_node").at("properties").at("ranks"),
            (json{{"type", "array"}, {"minItems", 1}, {"items", {{"type", "integer"}, {"minimum", 0}}}}));
  EXPECT_EQ(schema.at("properties").at("fleet_schema_version").at("pattern"), "^1\\.[0-9]+\\.[0-9]+$");
}

// The corpus files were written by the hand-kept codec this one replaced. A node's report is
// what the report reader makes of it (three-report-nodes.json holds 2.1.0 reports, which it
// upgrades), as before.
TEST(FleetJson, FilesTheEarlierCodecWroteReadAndWriteBackUnchanged) {
  for (const char* name : {"two-fixture-nodes.json", "three-report-nodes.json"}) {
    json expected = json::parse(read_text(kSource / "tests/fuzz/fleet/corpus" / name));
    const fl::FleetReport fleet = fl::fleet_from_json(expected, name);
    for (auto& node : expected.at("nodes"))
      if (!node.at("report").is_null())
        node["report"] = json::parse(interprobe::report::to_json_text(interprobe::report::parse_report_text(node.at("report").dump(), name)));
    EXPECT_EQ(fl::fleet_to_json(fleet), expected) << name;
  }
}

TEST(FleetJson, AWrongShapeNamesItsKeyPath) {
  const json good = json::parse(read_text(kSource / "tests/fuzz/fleet/corpus/two-fixture-nodes.json"));
  ASSERT_EQ(read_error(good), "accepted");
  json missing = good;
  missing["nodes"][1].erase("status");
  EXPECT_NE(read_error(missing).find("nodes[1]: missing required key 'status'"), std::string::npos) << read_error(missing);
  json misspelt = good;
  misspelt["nodes"][0]["status"] = "fine";
  EXPECT_NE(read_error(misspelt).find("nodes[0].status: \"fine\" is not one of \"ok\", \"failed\""), std::string::npos)
      << read_error(misspelt);
  json wrong_type = good;
  wrong_type["timing"]["gather_s"] = "slow";
  EXPECT_NE(read_error(wrong_type).find("timing.gather_s: expected a number"), std::string::npos) << read_error(wrong_type);
  json broken_report = good;
  broken_report["nodes"][0]["report"]["host"] = 7;
  const std::string report_error = read_error(broken_report);
  EXPECT_NE(report_error.find("(/nodes/0/report) the node's report: "), std::string::npos) << report_error;
  EXPECT_NE(report_error.find("host"), std::string::npos) << report_error;
}
