// `interprobe topo` end to end: JSON on fixtures, the views, --hwloc-xml, exit codes, the schema.
#include <gtest/gtest.h>

#include <sstream>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "support/run_binary.hpp"

namespace {

using interprobe::testing::run_interprobe;
namespace fs = std::filesystem;

std::string fixture(const std::string& name) { return std::string(INTERPROBE_FIXTURES) + "/topology/" + name; }

TEST(TopoCli, JsonOnTheBareMetalFixture) {
  auto p = run_interprobe({"topo", "--root", fixture("baremetal-2s-8gpu-pcie"), "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto j = nlohmann::json::parse(p.out);
  const auto& t = j.at("topology");
  EXPECT_EQ(t.at("gpus").size(), 8u);
  EXPECT_EQ(t.at("gpu_pairs").size(), 28u);
  EXPECT_EQ(t.at("gpu_index_order"), "pci_bus_id");
  EXPECT_EQ(t.at("gpus").at(0).at("bdf"), "0000:05:00.0");
  EXPECT_EQ(t.at("gpu_pairs").at(0).at("path"), "PIX");
  EXPECT_TRUE(t.at("gpu_pairs").at(0).at("p2p").is_null());
  EXPECT_EQ(j.at("probes").at(0).at("name"), "topology");
  EXPECT_EQ(j.at("probes").at(0).at("status"), "ok");
}

// As nvidia-smi topo -m: the matrix opens the section, every GPU-NIC cell holds a path class,
// and the NIC legend names the RDMA devices; an 8-GPU, 8-NIC HGX fits 100 columns.
TEST(TopoCli, MatrixComesFirstWithEveryNicCellAndTheNicLegend) {
  auto p = run_interprobe({"topo", "--root", fixture("hgx-h100-nvswitch"), "--no-color"}, {"COLUMNS=100"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto section = p.out.find("\ntopology\n");
  ASSERT_NE(section, std::string::npos);
  EXPECT_LT(p.out.find("path between devices", section), p.out.find("PCI functions", section));
  EXPECT_EQ(p.out.find("one block per row"), std::string::npos) << "the matrix was folded:\n" << p.out;
  std::istringstream in(p.out.substr(section));
  int gpu_rows = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.find("X = self") != std::string::npos) break;  // the path matrix ends at its legend (the P2P grid follows)
    if (line.rfind("  GPU", 0) != 0 || line.find(" X ") == std::string::npos) continue;
    ++gpu_rows;
    EXPECT_EQ(line.find(" . "), std::string::npos) << "a GPU-NIC cell left empty: " << line;
    EXPECT_LE(line.size(), 100u) << line;
  }
  EXPECT_EQ(gpu_rows, 8);
  EXPECT_NE(p.out.find("NIC legend: NIC0: mlx5_0 (0000:19:00.0)"), std::string::npos) << p.out;
  auto json = nlohmann::json::parse(run_interprobe({"topo", "--root", fixture("hgx-h100-nvswitch"), "--json"}).out);
  EXPECT_EQ(json.at("topology").at("gpus").at(0).at("nic_paths").size(), 8u);
}

TEST(TopoCli, MatrixAndTreeViews) {
  auto p = run_interprobe({"topo", "--root", fixture("baremetal-2s-8gpu-pcie"), "--tree", "--no-color"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("CPU and NUMA affinity"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("GPU7"), std::string::npos);
  EXPECT_NE(p.out.find("PCI tree"), std::string::npos);
  EXPECT_NE(p.out.find("└─ 0000:0a:00.0"), std::string::npos);
  EXPECT_NE(p.out.find("downtrained"), std::string::npos);
  auto plain = run_interprobe({"topo", "--root", fixture("baremetal-2s-8gpu-pcie"), "--no-color"});
  EXPECT_EQ(plain.out.find("PCI tree"), std::string::npos) << "the tree only with --tree";
  auto md = run_interprobe({"topo", "--root", fixture("hgx-h100-nvswitch"), "--format", "markdown"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("| GPU0 |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("NV18"), std::string::npos);
}

TEST(TopoCli, HwlocXmlInput) {
  auto p = run_interprobe({"topo", "--hwloc-xml", fixture("hgx-h100-nvswitch.hwloc.xml"), "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto t = nlohmann::json::parse(p.out).at("topology");
  EXPECT_EQ(t.at("source"), "hwloc_xml");
  EXPECT_EQ(t.at("gpu_pairs").at(0).at("path"), "NV18");
  auto bad = run_interprobe({"topo", "--hwloc-xml", "/nonexistent.xml"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

TEST(TopoCli, BadRootIsAnInputError) {
  auto p = run_interprobe({"topo", "--root", "/nonexistent/tree"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("/nonexistent/tree"), std::string::npos) << p.err;
}

TEST(TopoCli, RecordNvmlNeedsNvmlData) {
  fs::path out = fs::temp_directory_path() / ("interprobe-nvml-" + std::to_string(::getpid()) + ".json");
  auto p = run_interprobe({"topo", "--root", fixture("baremetal-2s-8gpu-pcie"), "--record-nvml", out.string(), "-q"});
  EXPECT_EQ(p.exit_code, 4) << p.err;  // nothing to record: the probe cannot run as asked
  EXPECT_FALSE(fs::exists(out));
  auto ok = run_interprobe({"topo", "--root", fixture("hgx-h100-nvswitch"), "--record-nvml", out.string(), "-q", "--json"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(out));
  fs::remove(out);
}

TEST(TopoCli, EveryFixtureReportValidatesAgainstTheSchema) {
  std::string python = INTERPROBE_PYTHON3;
  if (python.empty() || std::system((python + " -c 'import jsonschema' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "python3-jsonschema not installed";
  fs::path dir = fs::temp_directory_path() / ("interprobe-topo-schema-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string files;
  for (const auto& entry : fs::directory_iterator(std::string(INTERPROBE_FIXTURES) + "/topology")) {
    if (!entry.is_directory()) continue;
    auto out = dir / (entry.path().filename().string() + ".json");
    ASSERT_EQ(run_interprobe({"topo", "--root", entry.path().string(), "-q", "-o", out.string()}).exit_code, 0) << entry.path();
    files += " " + out.string();
  }
  auto xml = dir / "xml.json";
  ASSERT_EQ(run_interprobe({"topo", "--hwloc-xml", fixture("baremetal-2s-8gpu-pcie.hwloc.xml"), "-q", "-o", xml.string()}).exit_code, 0);
  auto live = dir / "live.json";
  ASSERT_EQ(run_interprobe({"topo", "-q", "-o", live.string()}).exit_code, 0);
  files += " " + xml.string() + " " + live.string();
  std::string cmd = python + " " + INTERPROBE_SOURCE_DIR + "/tests/cli/validate_report.py " + INTERPROBE_SOURCE_DIR +
                    "/report/schema/report.schema.json" + files;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  fs::remove_all(dir);
}

TEST(TopoCli, LiveRunListsThisMachine) {
  auto p = run_interprobe({"topo", "--json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto t = nlohmann::json::parse(p.out).at("topology");
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator("/sys/bus/pci/devices")) entries += e.path().filename().string().size() >= 12;
  EXPECT_EQ(t.at("pci_devices").size(), entries);
  bool nvidia = false;
  for (const auto& d : t.at("pci_devices")) nvidia = nvidia || d.at("vendor_id") == "10de";
  if (!nvidia) {
    EXPECT_TRUE(t.at("gpus").empty());
  }
}

}  // namespace
