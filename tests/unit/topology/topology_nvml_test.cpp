// The recorded-NVML format, NVML names, the JSON codec of the section, and the live machine.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "probes/topology/nvml_topology.hpp"
#include "probes/topology/pci_inventory.hpp"
#include "model/json.hpp"
#include "model/json_fields.hpp"
#include "model/schema_check.hpp"
#include "topology_test_support.hpp"

namespace interprobe {
namespace {

TEST(NvmlRecording, RoundTripsThroughTheFormat) {
  NvmlTopology data;
  data.source = report::NvmlSource::live;
  data.driver_version = "550.54.15";
  NvmlGpuRecord gpu;
  gpu.bdf = "0000:18:00.0";
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.memory_total_bytes = 85520809984;
  gpu.virtualization_mode = report::VirtualizationMode::passthrough;
  report::NvLinkInfo link;
  link.link = 0;
  link.active = true;
  link.version = 4;
  link.remote_bdf = "0000:05:00.0";
  link.remote_kind = report::NvLinkRemoteKind::nvswitch;
  gpu.nvlinks.push_back(link);
  data.gpus.push_back(gpu);
  NvmlP2pRecord p2p;
  p2p.a_bdf = "0000:18:00.0";
  p2p.b_bdf = "0000:2a:00.0";
  p2p.status.read = report::P2pCapability::not_supported;
  data.p2p.push_back(p2p);
  std::string reason;
  // The recording is ASCII whatever the driver's strings hold (U+009B is a terminal's CSI).
  NvmlTopology hostile = data;
  hostile.gpus[0].name = "H100\xc2\x9b" "31m\xff";
  std::string hostile_text = encode_nvml_recording(hostile);
  for (unsigned char c : hostile_text) EXPECT_LT(c, 0x80) << hostile_text;
  EXPECT_NE(hostile_text.find("H100\\u009b31m\\ufffd"), std::string::npos) << hostile_text;
  auto back = parse_nvml_recording(encode_nvml_recording(data), &reason);
  ASSERT_TRUE(back) << reason;
  EXPECT_EQ(back->source, report::NvmlSource::recorded);
  EXPECT_EQ(back->driver_version, "550.54.15");
  ASSERT_EQ(back->gpus.size(), 1u);
  EXPECT_EQ(back->gpus[0].memory_total_bytes, 85520809984);
  EXPECT_EQ(back->gpus[0].virtualization_mode, report::VirtualizationMode::passthrough);
  ASSERT_EQ(back->gpus[0].nvlinks.size(), 1u);
  EXPECT_EQ(back->gpus[0].nvlinks[0].remote_kind, report::NvLinkRemoteKind::nvswitch);
  EXPECT_EQ(back->gpus[0].nvlinks[0].remote_bdf, "0000:05:00.0");
  ASSERT_EQ(back->p2p.size(), 1u);
  EXPECT_EQ(back->p2p[0].status.read, report::P2pCapability::not_supported);
  EXPECT_FALSE(back->p2p[0].status.write.has_value());
}

TEST(NvmlRecording, RejectsWhatItCannotTrustWithAReason) {
  std::string reason;
  EXPECT_FALSE(parse_nvml_recording("not json", &reason));
  EXPECT_NE(reason.find("not valid JSON"), std::string::npos);
  EXPECT_FALSE(parse_nvml_recording(R"({"format": "other", "version": 1, "devices": []})", &reason));
  EXPECT_NE(reason.find("format"), std::string::npos);
  EXPECT_FALSE(parse_nvml_recording(R"({"format": "interprobe-nvml-topology", "version": 2, "devices": []})", &reason));
  EXPECT_NE(reason.find("version"), std::string::npos);
  EXPECT_FALSE(parse_nvml_recording(
      R"({"format": "interprobe-nvml-topology", "version": 1, "devices": [{"pci_bus_id": "../../etc"}]})", &reason));
  EXPECT_NE(reason.find("devices[0].pci_bus_id"), std::string::npos) << reason;
  EXPECT_FALSE(parse_nvml_recording(R"({"format": "interprobe-nvml-topology", "version": 1, "devices": [],
      "p2p": [{"a": "0000:01:00.0", "b": "0000:02:00.0", "read": "maybe"}]})", &reason));
  EXPECT_NE(reason.find("p2p[0].read"), std::string::npos) << reason;
}

// The recording in the repository reads, and writing what was read gives it back: same keys and
// values, bus ids in the normalised form the reader keeps ("00000000:18:00.0" -> "0000:18:00.0").
TEST(NvmlRecording, TheFixtureRoundTripsUnchanged) {
  std::ifstream in(topology_test::fixture_dir("hgx-h100-nvswitch") / "nvml.json");
  std::stringstream text;
  text << in.rdbuf();
  std::string reason;
  auto data = parse_nvml_recording(text.str(), &reason);
  ASSERT_TRUE(data) << reason;
  ASSERT_EQ(data->gpus.size(), 8u);
  EXPECT_EQ(data->gpus[0].nvlinks.size(), 18u);
  EXPECT_EQ(data->p2p.size(), 28u);
  nlohmann::json expected = nlohmann::json::parse(text.str());
  auto normalize = [](nlohmann::json& bus_id) {
    if (bus_id.is_string()) bus_id = *normalize_bus_id(bus_id.get<std::string>());
  };
  for (auto& device : expected["devices"]) {
    normalize(device["pci_bus_id"]);
    for (auto& link : device["nvlinks"]) normalize(link["remote_pci_bus_id"]);
  }
  for (auto& pair : expected["p2p"]) normalize(pair["a"]), normalize(pair["b"]);
  const std::string written = encode_nvml_recording(*data);
  EXPECT_EQ(nlohmann::json::parse(written), expected);
  const nlohmann::json schema = nvml_recording_schema();
  EXPECT_EQ(report::schema_violation(nlohmann::json::parse(written), schema), "");
  EXPECT_EQ(schema["$defs"]["p2p"]["properties"]["read"]["enum"].size(), 8u) << "7 P2P words and null";
}

// Kinds nlohmann's decoding alone would convert (a fraction or a boolean into an integer) and
// words outside a vocabulary are refused with the key path.
TEST(NvmlRecording, RefusesAWrongKindNamingTheKeyPath) {
  auto reason_for = [](const std::string& device) {
    std::string reason;
    auto data = parse_nvml_recording(R"({"format": "interprobe-nvml-topology", "version": 1, "devices": [)" + device + "]}", &reason);
    return data ? std::string("read") : reason;
  };
  EXPECT_NE(reason_for(R"({"pci_bus_id": "0000:18:00.0", "memory_total_bytes": 1e30})").find("devices[0].memory_total_bytes: expected"),
            std::string::npos);
  EXPECT_NE(reason_for(R"({"pci_bus_id": "0000:18:00.0", "nvlinks": [{"link": 0, "active": 1}]})").find("devices[0].nvlinks[0].active"),
            std::string::npos);
  EXPECT_NE(reason_for(R"({"pci_bus_id": "0000:18:00.0", "nvlinks": [{"link": 0, "remote_device_type": "cpu"}]})")
                .find("devices[0].nvlinks[0].remote_device_type: \"cpu\" is not one of \"gpu\", \"nvswitch\", \"ibmnpu\", \"unknown\""),
            std::string::npos) << reason_for(R"({"pci_bus_id": "0000:18:00.0", "nvlinks": [{"link": 0, "remote_device_type": "cpu"}]})");
  EXPECT_NE(reason_for(R"({"name": "x"})").find("devices[0]: missing required key 'pci_bus_id'"), std::string::npos);
  EXPECT_EQ(reason_for(R"({"pci_bus_id": "0000:18:00.0", "virtualization_mode": "a_mode_from_2030"})"), "read")
      << "a newer driver's mode reads as unknown";
}

TEST(Nvml, NamesAndBusIds) {
  EXPECT_EQ(normalize_bus_id("00000000:65:00.0"), "0000:65:00.0");
  EXPECT_EQ(normalize_bus_id("00010000:E0:1F.7"), "10000:e0:1f.7");
  EXPECT_FALSE(normalize_bus_id("garbage"));
  EXPECT_EQ(p2p_status_name(0), report::P2pCapability::ok);
  EXPECT_EQ(p2p_status_name(1), report::P2pCapability::chipset_not_supported);
  EXPECT_EQ(p2p_status_name(3), report::P2pCapability::topology_not_supported);
  EXPECT_EQ(p2p_status_name(5), report::P2pCapability::not_supported);
  EXPECT_EQ(p2p_status_name(42), report::P2pCapability::unknown);
  EXPECT_EQ(virtualization_mode_name(1), report::VirtualizationMode::passthrough);
  EXPECT_FALSE(virtualization_mode_name(9));
}

TEST(TopologyJson, SectionRoundTrips) {
  report::Report r;
  r.topology = topology_test::read_fixture("hgx-h100-nvswitch");
  std::string text = report::to_json_text(r);
  auto back = report::parse_report_text(text, "test");
  ASSERT_TRUE(back.topology);
  EXPECT_EQ(report::to_json_text(back), text);
  EXPECT_EQ(back.topology->gpu_pairs.size(), 28u);
  EXPECT_EQ(back.topology->gpus[3].nvlinks.size(), 18u);
}

// The live machine: every PCI function with the ids `lspci -n` prints (when lspci is here).
TEST(LiveInventory, MatchesLspci) {
  auto devices = read_pci_inventory(HostRoot());
  FILE* pipe = ::popen("lspci -D -n 2>/dev/null", "r");
  ASSERT_TRUE(pipe);
  std::set<std::string> from_lspci, ours;
  char line[512];
  while (std::fgets(line, sizeof line, pipe)) {
    // "0000:00:03.0 0200: 1af4:1041 (rev 01)"
    std::istringstream in(line);
    std::string bdf, cls, ids;
    in >> bdf >> cls >> ids;
    cls.pop_back();
    from_lspci.insert(bdf + " " + cls + " " + ids);
  }
  int rc = ::pclose(pipe);
  if (from_lspci.empty() || rc != 0) GTEST_SKIP() << "lspci not available";
  for (const auto& d : devices) ours.insert(d.bdf + " " + d.class_id.value_or("").substr(0, 4) + " " + d.vendor_id.value_or("") + ":" + d.device_id.value_or(""));
  EXPECT_EQ(ours, from_lspci);
}

}  // namespace
}  // namespace interprobe
