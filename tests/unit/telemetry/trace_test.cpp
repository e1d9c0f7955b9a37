// Trace files: round trip, and bad input refused naming the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "model/json_fields.hpp"
#include "model/schema_check.hpp"
#include "probes/telemetry/trace.hpp"

namespace interprobe::telemetry {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_trace(text, "t.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const char* kMinimal = R"({"format":"interprobe-telemetry-trace","version":1,"interval_s":0.1,
  "gpus":[{"index":0,"power_limit_w":600}],
  "samples":[{"t_s":0,"gpu":0,"utilization_fraction":1,"pcie_tx_bytes":5},{"t_s":0.1,"gpu":0,"utilization_fraction":0.5}]})";

TEST(TelemetryTrace, RoundTripKeepsEveryField) {
  Trace t = parse_trace(kMinimal, "t.json");
  ASSERT_EQ(t.samples.size(), 2u);
  EXPECT_EQ(t.samples[0].pcie_tx_bytes, 5);
  EXPECT_FALSE(t.samples[1].pcie_tx_bytes);
  t.gpus[0].gpm_reason = "not supported";
  t.samples[1].dram_active_fraction = 0.25;
  Trace back = parse_trace(trace_to_json_text(t), "back");
  EXPECT_EQ(back.gpus[0].power_limit_w, 600);
  EXPECT_EQ(back.gpus[0].gpm_reason, "not supported");
  EXPECT_EQ(back.samples[1].dram_active_fraction, 0.25);
  EXPECT_EQ(back.samples[1].utilization_fraction, 0.5);
}

// A GPU name is the driver's string: invalid UTF-8 must not cost the recorded trace (the writer
// threw, an internal error after the whole observation), and a C1 control (U+009B, a terminal's
// CSI) leaves as an escape, so `cat` of a trace cannot drive the terminal.
TEST(TelemetryTrace, AHostileGpuNameIsWrittenAsAsciiEscapes) {
  Trace t = parse_trace(kMinimal, "t.json");
  t.gpus[0].name = "H100\xff\xc2\x9b" "31m\x1b[2J";
  std::string text;
  ASSERT_NO_THROW(text = trace_to_json_text(t));
  for (unsigned char c : text) EXPECT_TRUE(c < 0x80 && (c >= 0x20 || c == '\n')) << int(c) << " in " << text;
  EXPECT_NE(text.find("\\u009b31m\\u001b[2J"), std::string::npos) << text;
  EXPECT_EQ(parse_trace(text, "back").gpus[0].name, "H100\xef\xbf\xbd\xc2\x9b" "31m\x1b[2J") << "U+FFFD for the bad byte";
}

TEST(TelemetryTrace, BadInputNamesTheField) {
  EXPECT_NE(error_of("not json").find("not JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"format":"x","version":1})").find("format"), std::string::npos);
  std::string s = kMinimal;
  EXPECT_NE(error_of(std::string(s).replace(s.find("\"utilization_fraction\":1"), 24, "\"utilization_fraction\":7")).find("samples[0].utilization_fraction"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(s).replace(s.find("\"gpu\":0"), 7, "\"gpu\":3")).find("samples[0].gpu"), std::string::npos);
  EXPECT_NE(error_of(std::string(s).replace(s.find("\"power_limit_w\":600"), 19, "\"power_limit_w\":-1")).find("gpus[0].power_limit_w"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(s).replace(s.find("\"version\":1"), 11, "\"version\":2")).find("version"), std::string::npos);
  // A number json cannot hold (found by fuzz_trace): an input error, not a crash.
  EXPECT_NE(error_of(std::string(s).replace(s.find("\"power_limit_w\":600"), 19, "\"power_limit_w\":6E999")).find("not JSON"),
            std::string::npos);
}

// Every trace the repository holds (fixtures and the fuzzer's seeds) reads, and writing what was
// read gives the same document back: same keys, same values, absent readings still left out.
TEST(TelemetryTrace, EveryTraceInTheRepositoryRoundTripsUnchanged) {
  const std::filesystem::path fixtures(INTERPROBE_FIXTURES);
  std::vector<std::filesystem::path> traces;
  for (const auto& dir : {fixtures / "telemetry", fixtures / ".." / "fuzz" / "trace" / "corpus"})
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".json") traces.push_back(entry.path());
  ASSERT_GE(traces.size(), 15u);
  const nlohmann::json schema = trace_schema();
  for (const auto& path : traces) {
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    Trace trace = parse_trace(text.str(), path.string());
    const std::string written = trace_to_json_text(trace);
    EXPECT_EQ(nlohmann::json::parse(written), nlohmann::json::parse(text.str())) << path;
    EXPECT_EQ(report::schema_violation(nlohmann::json::parse(written), schema), "") << path;
  }
}

// The schema is the struct declarations': every member is a property of its type; the reader's
// additions are the required keys, the floor of 0 and the ceiling of a fraction.
TEST(TelemetryTrace, SchemaComesFromTheDeclarations) {
  const nlohmann::json schema = trace_schema();
  const auto& sample = schema["$defs"]["trace_sample"];
  EXPECT_EQ(sample["properties"].size(), 18u);
  EXPECT_EQ(sample["properties"]["gpu"]["type"], "integer");
  EXPECT_EQ(sample["properties"]["power_w"]["type"], nlohmann::json::array({"number", "null"}));
  EXPECT_EQ(sample["properties"]["pcie_tx_bytes"]["minimum"], 0);
  EXPECT_GT(sample["properties"]["dram_active_fraction"].value("maximum", 0.0), 1.0 - 1e-6);
  EXPECT_EQ(sample["required"], nlohmann::json::array({"t_s", "gpu"}));
  EXPECT_EQ(schema["properties"]["gpus"]["items"]["$ref"], "#/$defs/trace_gpu");
  EXPECT_EQ(schema["properties"]["format"]["const"], kTraceFormat);
}

// What nlohmann's decoding alone would let through (a boolean or a fraction into an integer, a
// missing key left at its default): refused before decoding, naming the key path.
TEST(TelemetryTrace, KindsAndMissingKeysAreCheckedBeforeDecoding) {
  std::string s = kMinimal;
  auto replaced = [&](const std::string& from, const std::string& to) { return std::string(s).replace(s.find(from), from.size(), to); };
  EXPECT_NE(error_of(replaced("\"pcie_tx_bytes\":5", "\"pcie_tx_bytes\":5.5")).find("samples[0].pcie_tx_bytes: expected integer or null, found 5.5"),
            std::string::npos) << error_of(replaced("\"pcie_tx_bytes\":5", "\"pcie_tx_bytes\":5.5"));
  EXPECT_NE(error_of(replaced("\"pcie_tx_bytes\":5", "\"pcie_tx_bytes\":1e30")).find("samples[0].pcie_tx_bytes"), std::string::npos);
  EXPECT_NE(error_of(replaced("\"power_limit_w\":600", "\"power_limit_w\":true")).find("gpus[0].power_limit_w: expected"),
            std::string::npos);
  EXPECT_NE(error_of(replaced("\"t_s\":0.1,", "")).find("samples[1]: missing required key 't_s'"), std::string::npos);
  EXPECT_NE(error_of(replaced("\"gpus\":[{\"index\":0,", "\"gpus\":[{")).find("gpus[0]: missing required key 'index'"), std::string::npos);
  EXPECT_NE(error_of(replaced("\"pcie_tx_bytes\":5", "\"pcie_tx_bytes\":18446744073709551615")).find("samples[0].pcie_tx_bytes"),
            std::string::npos);
  EXPECT_NE(error_of(replaced("\"interval_s\":0.1", "\"interval_s\":0")).find("interval_s: must be above 0"), std::string::npos);
  EXPECT_EQ(error_of(kMinimal), "");
}

}  // namespace
}  // namespace interprobe::telemetry
