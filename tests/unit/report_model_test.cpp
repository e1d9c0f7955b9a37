// Report model 2.0 over every fixture: the JSON round-trips byte for byte, every report (and every
// saved 1.x report, upgraded) validates against the 2.0 schema, and the metrics view flattens each
// into unique, unit-consistent rows.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "model/json.hpp"
#include "model/json_fields.hpp"
#include "model/schema_check.hpp"
#include "model/metrics.hpp"
#include "model/sections.hpp"
#include "support/run_binary.hpp"

using namespace interprobe::report;
using interprobe::testing::run_interprobe;
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `run --root FIXTURE --json` of every fixture tree, written once per test binary.
const std::map<std::string, std::string>& fixture_reports() {
  static const std::map<std::string, std::string> reports = [] {
    std::map<std::string, std::string> out;
    std::vector<fs::path> roots = {fs::path(INTERPROBE_FIXTURES) / "minimal-kvm-guest"};
    for (const char* group : {"topology", "virt"})
      for (const auto& e : fs::directory_iterator(fs::path(INTERPROBE_FIXTURES) / group))
        if (e.is_directory() && e.path().filename() != "malformed") roots.push_back(e.path());  // malformed: exit 2 by design
    for (const auto& root : roots) {
      auto p = run_interprobe({"run", "--root", root.string(), "--json"});
      if (p.exit_code != 0) throw std::runtime_error(root.string() + ": exit " + std::to_string(p.exit_code) + ": " + p.err);
      out[root.parent_path().filename().string() + "/" + root.filename().string()] = p.out;
    }
    // Saved reports of live measurements (tests/fixtures/reports/README.md says how each was made).
    for (const auto& e : fs::directory_iterator(fs::path(INTERPROBE_FIXTURES) / "reports"))
      if (e.path().extension() == ".json") out["reports/" + e.path().filename().string()] = read_text(e.path());
    return out;
  }();
  return reports;
}

std::vector<fs::path> v1_reports() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(INTERPROBE_SOURCE_DIR) / "tests/golden/v1"))
    if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

bool have_jsonschema() {
  std::string python = INTERPROBE_PYTHON3;
  return !python.empty() && std::system((python + " -c 'import jsonschema' 2>/dev/null").c_str()) == 0;
}

// The unit a path's last segment names: ".../gbps" and ".../peak_gbps" are gbps.
std::string unit_of_leaf(const std::string& path) {
  std::string leaf = path.substr(path.rfind('/') + 1);
  leaf = leaf.substr(0, leaf.find('#'));
  static const std::pair<const char*, const char*> kSuffixes[] = {
      {"gbps", "gbps"}, {"tflops", "tflops"}, {"_us", "us"}, {"_bytes", "bytes"}, {"_s", "s"}, {"_gts", "gts"}, {"_fraction", "fraction"}, {"_w", "w"}};
  for (const auto& [suffix, unit] : kSuffixes) {
    std::string s = suffix;
    if (leaf.size() >= s.size() && leaf.compare(leaf.size() - s.size(), s.size(), s) == 0) return unit;
  }
  return "count";
}

const MetricRow* find_row(const std::vector<MetricRow>& rows, const std::string& path) {
  for (const auto& row : rows)
    if (row.path == path) return &row;
  return nullptr;
}

}  // namespace

TEST(ReportModel, EveryFixtureReportRoundTripsByteForByte) {
  ASSERT_GE(fixture_reports().size(), 20u);
  for (const auto& [name, text] : fixture_reports()) {
    Report r = parse_report_text(text, name);
    EXPECT_EQ(to_json_text(r), text) << name;
  }
}

TEST(ReportModel, EveryFixtureReportAndEveryUpgraded1xReportValidates) {
  if (!have_jsonschema()) GTEST_SKIP() << "python3-jsonschema not installed";
  fs::path dir = fs::temp_directory_path() / ("interprobe-model-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string files;
  int n = 0;
  for (const auto& [name, text] : fixture_reports()) {
    auto out = dir / (std::to_string(n++) + ".json");
    std::ofstream(out) << text;
    files += " " + out.string();
  }
  for (const auto& v1 : v1_reports()) {
    auto out = dir / ("v1-" + v1.filename().string());
    std::ofstream(out) << to_json_text(read_report_file(v1));
    files += " " + out.string();
  }
  std::string cmd = std::string(INTERPROBE_PYTHON3) + " " + INTERPROBE_SOURCE_DIR + "/tests/cli/validate_report.py " +
                    INTERPROBE_SOURCE_DIR + "/report/schema/report.schema.json" + files;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  fs::remove_all(dir);
}

TEST(ReportModel, Saved1xReportsStillRenderThroughReportFile) {
  auto reports = v1_reports();
  ASSERT_GE(reports.size(), 5u);
  for (const auto& v1 : reports) {
    auto p = run_interprobe({"report", v1.string()});
    EXPECT_EQ(p.exit_code, 0) << v1 << ": " << p.err;
    EXPECT_NE(p.out.find("probes"), std::string::npos) << v1;
    // What 1.x called `seconds` is 2.0's `duration_s`, value for value.
    auto old_json = nlohmann::json::parse(read_text(v1));
    Report upgraded = read_report_file(v1);
    ASSERT_EQ(upgraded.probes.size(), old_json.at("probes").size()) << v1;
    for (std::size_t i = 0; i < upgraded.probes.size(); ++i)
      EXPECT_DOUBLE_EQ(upgraded.probes[i].duration_s, old_json["probes"][i].at("seconds").get<double>()) << v1;
    EXPECT_EQ(upgraded.schema_version, kSchemaVersion) << v1;
  }
}

TEST(Metrics, EveryFixtureGivesUniquePathsWithTheUnitTheirKeyNames) {
  for (const auto& [name, text] : fixture_reports()) {
    auto rows = metrics_of(parse_report_text(text, name));
    ASSERT_FALSE(rows.empty()) << name;  // every report has its probes' durations at least
    std::set<std::string> paths;
    for (const auto& row : rows) {
      EXPECT_TRUE(paths.insert(row.path).second) << name << ": duplicate " << row.path;
      EXPECT_EQ(row.unit, unit_of_leaf(row.path)) << name << ": " << row.path;
      EXPECT_EQ(row.labels.count("section"), 1u) << row.path;
    }
  }
}

TEST(Metrics, TopologyRowsCarryThePairsAndLinks) {
  auto hgx = metrics_of(parse_report_text(fixture_reports().at("topology/hgx-h100-nvswitch"), "hgx"));
  const MetricRow* nvlinks = find_row(hgx, "topology/gpu_pairs/0-1/nvlink_count");
  ASSERT_TRUE(nvlinks);
  EXPECT_EQ(nvlinks->value, 18);  // NV18 through the NVSwitches
  EXPECT_EQ(nvlinks->better, Better::higher);
  EXPECT_EQ(nvlinks->labels.at("path"), "NV18");
  auto proxmox = metrics_of(parse_report_text(fixture_reports().at("topology/proxmox-q35-8gpu-rootports"), "pve"));
  const MetricRow* link = find_row(proxmox, "topology/gpus/7/link/current_gts");
  ASSERT_TRUE(link);
  EXPECT_DOUBLE_EQ(link->value, 32.0);
  EXPECT_FALSE(link->spread);  // read, not timed
  std::size_t pairs = 0;
  for (const auto& row : proxmox) pairs += row.path.rfind("topology/gpu_pairs/", 0) == 0 && row.unit == "count";
  EXPECT_EQ(pairs, 28u);  // 8 GPUs: 28 pairs
}

// 1.x wrote widths, nvlinks and memory_total_bytes under other names, and why the P2P clique was
// unknown inside its value: the upgrade keeps every value under its 2.0 name.
TEST(ReportModel, Upgraded1xTopologyAndVirtKeepTheirValues) {
  fs::path v1 = fs::path(INTERPROBE_SOURCE_DIR) / "tests/golden/v1/hgx-h100-nvswitch.json";
  auto old_json = nlohmann::json::parse(read_text(v1));
  Report r = read_report_file(v1);
  ASSERT_TRUE(r.topology && r.virtualization);
  const auto& old_pair = old_json.at("topology").at("gpu_pairs").at(0);
  EXPECT_EQ(r.topology->gpu_pairs.at(0).nvlink_count, old_pair.at("nvlinks").get<std::int64_t>());
  EXPECT_EQ(r.topology->gpu_pairs.at(0).pcie_path, parse_enum<PciePath>(old_pair.at("pcie_path").get<std::string>()));
  EXPECT_EQ(r.topology->gpus.at(0).memory_bytes, old_json["topology"]["gpus"][0].at("memory_total_bytes").get<std::int64_t>());
  const auto& old_link = old_json["topology"]["pci_devices"][0].at("link");
  auto as_json = [](const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  EXPECT_EQ(as_json(r.topology->pci_devices.at(0).link.max_lanes), old_link.at("max_width"));
  const auto& gpu = r.virtualization->gpus.at(0);
  EXPECT_EQ(gpu.p2p_clique, P2pClique::unknown);  // was "unknown: needs root"
  EXPECT_EQ(gpu.p2p_clique_reason, "needs root");
  EXPECT_EQ(as_json(gpu.gpu_max_lanes), old_json["virtualization"]["gpus"][0].at("gpu_max_width"));
  EXPECT_EQ(r.virtualization->host.iommu_group_count,
            old_json["virtualization"]["host"].at("iommu_groups").get<std::int64_t>());
}

// The 1.x reader defaulted a missing key; a 1.x report whose defaults break a 2.0 rule (an
// all-reduce point of 0 elements) is refused on read, so `report FILE --json` never writes a
// report that cannot be read back (the fuzz target found one).
TEST(ReportModel, A1xReportThatDoesNotHoldAs20IsRefusedNamingTheKey) {
  auto old_json = nlohmann::json::parse(read_text(fs::path(INTERPROBE_SOURCE_DIR) / "tests/golden/v1/allreduce-mpi.json"));
  EXPECT_NO_THROW(parse_report_text(old_json.dump(), "kept.json"));
  old_json["collective"]["allreduce"][0]["points"][0].erase("count");
  try {
    parse_report_text(old_json.dump(), "old.json");
    FAIL() << "a 1.x point without its count was accepted";
  } catch (const interprobe::InputError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("old.json"), std::string::npos) << what;
    EXPECT_NE(what.find("points[0].elements_per_rank"), std::string::npos) << what;
  }
}

TEST(Metrics, MeasuredRowsCarryTheirSpread) {
  Report bw = read_report_file(fs::path(INTERPROBE_SOURCE_DIR) / "tests/golden/v1/bw-host.json");
  auto rows = metrics_of(bw);
  const MetricRow* rate = find_row(rows, "bandwidth/host/memcpy/node0->node0/pageable/x1/1MiB/gbps");
  ASSERT_TRUE(rate) << "rows: " << rows.size();
  EXPECT_EQ(rate->better, Better::higher);
  ASSERT_TRUE(rate->spread);
  EXPECT_GT(rate->spread->samples, 0);
  ASSERT_TRUE(rate->spread->min && rate->spread->max);
  EXPECT_LE(*rate->spread->min, rate->value);
  EXPECT_GE(*rate->spread->max, rate->value);
  EXPECT_EQ(rate->labels.at("bytes"), "1048576");

  Report mpi = read_report_file(fs::path(INTERPROBE_SOURCE_DIR) / "tests/golden/v1/allreduce-mpi.json");
  auto collective = metrics_of(mpi);
  const MetricRow* latency = find_row(collective, "collective/mpi/8B/time_us");
  ASSERT_TRUE(latency);
  EXPECT_EQ(latency->better, Better::lower);
  ASSERT_TRUE(latency->spread);
  EXPECT_LE(*latency->spread->min, latency->value);
  EXPECT_TRUE(find_row(collective, "collective/mpi/in_place/64KiB/busbw_gbps"));
}

TEST(Metrics, SizeSegmentsAreExactBinaryUnits) {
  EXPECT_EQ(size_segment(8), "8B");
  EXPECT_EQ(size_segment(4096), "4KiB");
  EXPECT_EQ(size_segment(256 << 20), "256MiB");
  EXPECT_EQ(size_segment(std::int64_t{1} << 30), "1GiB");
  EXPECT_EQ(size_segment(1000), "1000B");
  EXPECT_EQ(size_segment(1536), "1536B");
}

// Issue 35: the schema is generated from the INTERPROBE_JSON declarations; the committed file is
// its text, so a member added to a struct is in the file the tests and users validate with.
TEST(GeneratedSchema, TheCommittedFileIsWhatTheDeclarationsGenerate) {
  const fs::path committed = fs::path(INTERPROBE_SOURCE_DIR) / "report/schema/report.schema.json";
  const std::string generated = report_schema_text();
  if (std::getenv("INTERPROBE_REGENERATE_SCHEMA")) {
    std::ofstream(committed, std::ios::binary) << generated;
    GTEST_SKIP() << "wrote " << committed;
  }
  EXPECT_TRUE(read_text(committed) == generated)
      << "report/schema/report.schema.json is not what the declarations generate: run "
         "INTERPROBE_REGENERATE_SCHEMA=1 build/tests/unit/test_report_model --gtest_filter='GeneratedSchema.*'";
}

namespace schema_probe {
using interprobe::report::EnumName;
using interprobe::report::from_json;  // the enum codec, found by argument-dependent lookup
using interprobe::report::to_json;
enum class Shade { light, dark };
INTERPROBE_DECLARE_ENUM(Shade);
constexpr EnumName<Shade> kShadeNames[] = {{Shade::light, "light"}, {Shade::dark, "dark"}};
std::span<const EnumName<Shade>> names(Shade) { return kShadeNames; }
struct Leaf {
  std::int64_t count = 0;
  std::optional<double> rate_gbps;
};
struct Tree {
  std::string name;
  std::uint32_t width = 0;
  Shade shade = Shade::light;
  std::optional<Shade> maybe_shade;
  std::vector<Leaf> leaves;
  std::map<std::string, bool> flags;
  std::optional<Leaf> spare;
};
INTERPROBE_JSON(Leaf, count, rate_gbps)
INTERPROBE_JSON(Tree, name, width, shade, maybe_shade, leaves, flags, spare)
}  // namespace schema_probe

TEST(GeneratedSchema, EachMemberIsDescribedByItsDeclaredType) {
  SchemaDefs defs;
  EXPECT_EQ(defs.ref<schema_probe::Tree>(), nlohmann::json({{"$ref", "#/$defs/tree"}}));
  const auto& tree = defs.defs().at("tree");
  const auto& p = tree.at("properties");
  EXPECT_EQ(tree.at("required").size(), 7u);
  EXPECT_EQ(tree.at("additionalProperties"), false);
  EXPECT_EQ(p.at("name"), nlohmann::json({{"type", "string"}}));
  EXPECT_EQ(p.at("width"), nlohmann::json::parse(R"({"type": "integer", "minimum": 0})"));
  EXPECT_EQ(p.at("shade"), nlohmann::json::parse(R"({"enum": ["light", "dark"]})"));
  EXPECT_EQ(p.at("maybe_shade"), nlohmann::json::parse(R"({"enum": ["light", "dark", null]})"));
  EXPECT_EQ(p.at("leaves"), nlohmann::json::parse(R"({"type": "array", "items": {"$ref": "#/$defs/leaf"}})"));
  EXPECT_EQ(p.at("flags"), nlohmann::json::parse(R"({"type": "object", "additionalProperties": {"type": "boolean"}})"));
  EXPECT_EQ(p.at("spare"), nlohmann::json::parse(R"({"anyOf": [{"$ref": "#/$defs/leaf"}, {"type": "null"}]})"));
  EXPECT_EQ(defs.defs().at("leaf").at("properties").at("rate_gbps"),
            nlohmann::json::parse(R"({"type": ["number", "null"]})"));
  // The codec the same line declares writes what the schema describes.
  schema_probe::Tree t{"t", 3, schema_probe::Shade::dark, std::nullopt, {{2, 1.5}}, {{"on", true}}, std::nullopt};
  const nlohmann::json j = t;
  EXPECT_EQ(j.at("shade"), "dark");
  EXPECT_TRUE(j.at("maybe_shade").is_null());
  EXPECT_EQ(j.at("leaves")[0].at("rate_gbps"), 1.5);
}

// What the annotations add: numbers are non-negative but the named differences, members a later
// minor version added are not required, and an annotated struct that no longer exists fails.
TEST(GeneratedSchema, AnnotationsAddBoundsPatternsAndTheMembersOlderReportsLack) {
  const auto schema = report_schema();
  const auto& defs = schema.at("$defs");
  EXPECT_EQ(defs.at("bandwidth_point").at("properties").at("gbps").at("minimum"), 0);
  EXPECT_FALSE(defs.at("batch_estimate").at("properties").at("residual_us").contains("minimum"));
  const auto& required = defs.at("compute_engine_result").at("required");
  EXPECT_EQ(std::count(required.begin(), required.end(), "launch_floor_graph_us"), 0);
  EXPECT_EQ(std::count(required.begin(), required.end(), "launch_floor_us"), 1);
  EXPECT_EQ(schema.at("required").size(), 5u);  // the sections are there only when their probe ran
  EXPECT_TRUE(defs.at("finding_id").at("enum").size() > 40);
}

TEST(Vocabulary, NamesRoundTripAndUnknownTextIsRefused) {
  for (const auto& entry : names(Severity{})) EXPECT_EQ(parse_enum<Severity>(to_string(entry.value)), entry.value);
  EXPECT_FALSE(parse_enum<Severity>("critical"));
  EXPECT_EQ(enum_choices<Severity>(), "info, warn, fail");
}

namespace {

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

}  // namespace

// The JSON examples of the docs (docs/report.md) are the binary's own output: each block after a marker
//   <!-- json-example: ARGS | /json/pointer -->
// must equal that part of `interprobe ARGS --json` (ARGS relative to the source tree).
TEST(ReadmeExamples, JsonExamplesAreWhatTheBinaryWrites) {
  std::string readme = read_text(fs::path(INTERPROBE_SOURCE_DIR) / "README.md");
  for (const auto& page : fs::directory_iterator(fs::path(INTERPROBE_SOURCE_DIR) / "docs"))
    if (page.path().extension() == ".md") readme += read_text(page.path());
  const std::string marker = "<!-- json-example: ";
  int examples = 0;
  for (auto at = readme.find(marker); at != std::string::npos; at = readme.find(marker, at + 1)) {
    auto end = readme.find("-->", at);
    std::string spec = readme.substr(at + marker.size(), end - at - marker.size());
    auto bar = spec.find('|');
    ASSERT_NE(bar, std::string::npos) << spec;
    std::vector<std::string> args;
    for (auto& word : split_words(spec.substr(0, bar)))
      args.push_back(word.rfind("tests/", 0) == 0 ? std::string(INTERPROBE_SOURCE_DIR) + "/" + word : word);
    args.push_back("--json");
    std::string pointer = split_words(spec.substr(bar + 1)).at(0);
    auto block = readme.find("```json\n", end);
    auto block_end = readme.find("```", block + 8);
    ASSERT_NE(block, std::string::npos) << spec;
    auto documented = nlohmann::json::parse(readme.substr(block + 8, block_end - block - 8));
    auto p = run_interprobe(args);
    ASSERT_EQ(p.exit_code, 0) << spec << ": " << p.err;
    auto actual = nlohmann::json::parse(p.out).at(nlohmann::json::json_pointer(pointer));
    EXPECT_EQ(documented, actual) << spec << "\nthe binary writes:\n" << actual.dump(2);
    ++examples;
  }
  EXPECT_GE(examples, 2) << "the docs lost their JSON examples";
}

namespace {

// The schema's `enum` at `pointer`, without null.
std::set<std::string> schema_enum(const std::string& pointer) {
  static const auto schema = report_schema();
  std::set<std::string> out;
  for (const auto& v : schema.at(nlohmann::json::json_pointer(pointer)).at("enum"))
    if (!v.is_null()) out.insert(v.get<std::string>());
  return out;
}

}  // namespace

// The finding catalogue (docs/findings.md, after <!-- finding-table -->) lists every id the schema
// enumerates, and nothing else; with the next test, a rule id without a docs entry fails.
TEST(ReadmeExamples, FindingTableMatchesTheSchema) {
  std::string readme = read_text(fs::path(INTERPROBE_SOURCE_DIR) / "docs/findings.md");
  auto at = readme.find("<!-- finding-table -->");
  ASSERT_NE(at, std::string::npos) << "docs/findings.md has no finding table";
  std::set<std::string> documented;
  std::istringstream lines(readme.substr(at));
  std::string line;
  std::getline(lines, line);  // the marker
  while (std::getline(lines, line) && (line.empty() || line[0] == '|'))
    if (line.rfind("| `", 0) == 0) documented.insert(line.substr(3, line.find('`', 3) - 3));
  EXPECT_EQ(documented, schema_enum("/$defs/finding_id"));
}

// Every id the rules can write is in the schema's list (the rules spell ids as literals).
TEST(ReadmeExamples, EveryFindingIdOfTheRulesIsInTheSchema) {
  std::set<std::string> in_rules, prefixes;
  for (const auto& section : kSections)
    for (std::string_view known : section.finding_ids) prefixes.insert(std::string(known.substr(0, known.find('.'))));
  EXPECT_GE(prefixes.size(), 8u);
  const std::regex id("\"((" + fmt::format("{}", fmt::join(prefixes, "|")) + ")\\.[a-z0-9_]+)\"");
  for (const auto& e : fs::directory_iterator(fs::path(INTERPROBE_SOURCE_DIR) / "report/analysis")) {
    std::string text = read_text(e.path());
    for (std::sregex_iterator it(text.begin(), text.end(), id), end; it != end; ++it) in_rules.insert((*it)[1]);
  }
  EXPECT_GE(in_rules.size(), 30u);
  EXPECT_EQ(in_rules, schema_enum("/$defs/finding_id"));
}
