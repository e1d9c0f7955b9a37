// Every fixture against its golden file (tests/golden/topology/<fixture>.json), plus the facts each
// fixture exists for, asserted directly so a wrong golden file cannot hide them.
// Regenerate the golden files after an intended change: INTERPROBE_UPDATE_GOLDEN=1 ./test_topology
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "model/json.hpp"
#include "topology_test_support.hpp"

namespace interprobe {
namespace {

using json = nlohmann::json;
using topology_test::pair_of;
using topology_test::read_fixture;

const char* const kFixtures[] = {"baremetal-2s-8gpu-pcie", "proxmox-q35-8gpu-rootports", "q35-rootbus-gpus",
                                 "i440fx-guest",           "hgx-h100-nvswitch",          "kernel-5.4-old-link-strings"};

// The section as the report writes it, without what depends on this machine's pci.ids version.
json golden_view(const report::TopologySection& s) {
  report::Report r;
  r.topology = s;
  json j = json::parse(report::to_json_text(r)).at("topology");
  for (auto& d : j.at("pci_devices")) {
    d.erase("vendor_name");
    d.erase("device_name");
  }
  if (j.at("nvml_source").is_null())
    for (auto& g : j.at("gpus")) g.erase("name");
  return j;
}

class Golden : public ::testing::TestWithParam<const char*> {};

TEST_P(Golden, MatchesGoldenFile) {
  std::string name = GetParam();
  json actual = golden_view(read_fixture(name));
  std::string path = std::string(INTERPROBE_SOURCE_DIR) + "/tests/golden/topology/" + name + ".json";
  if (std::getenv("INTERPROBE_UPDATE_GOLDEN")) {
    std::ofstream(path) << actual.dump(1) << "\n";
    GTEST_SKIP() << "golden file rewritten: " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing golden file " << path << "; run with INTERPROBE_UPDATE_GOLDEN=1";
  json expected = json::parse(in);
  EXPECT_EQ(actual, expected) << "diff (expected -> actual): " << json::diff(expected, actual).dump(1);
}

INSTANTIATE_TEST_SUITE_P(Topology, Golden, ::testing::ValuesIn(kFixtures));

TEST(Fixtures, BareMetalShowsEveryPathClass) {
  auto s = read_fixture("baremetal-2s-8gpu-pcie");
  ASSERT_EQ(s.gpus.size(), 8u);
  std::set<std::string> classes;
  for (const auto& p : s.gpu_pairs) classes.insert(p.path);
  EXPECT_EQ(classes, (std::set<std::string>{"PIX", "PXB", "PHB", "NODE", "SYS"}));
  EXPECT_EQ(pair_of(s, 0, 1)->path, "PIX");   // one switch: its upstream and downstream ports count once
  EXPECT_EQ(pair_of(s, 0, 2)->path, "PXB");   // two levels of switches
  EXPECT_EQ(pair_of(s, 4, 6)->path, "PHB");   // two root ports of one root bus
  EXPECT_EQ(pair_of(s, 6, 7)->path, "NODE");  // two root buses of NUMA node 1
  EXPECT_EQ(pair_of(s, 0, 4)->path, "SYS");   // across sockets
  EXPECT_NEAR(*pair_of(s, 0, 1)->bottleneck_gbps, 31.51, 0.01);  // Gen4 x16
  EXPECT_NEAR(*pair_of(s, 2, 3)->bottleneck_gbps, 15.75, 0.01);  // GPU3 trained at x8
  EXPECT_FALSE(pair_of(s, 0, 1)->p2p.has_value());               // no NVML: null, not a guess
  const auto* gpu3 = s.device("0000:0a:00.0");
  ASSERT_TRUE(gpu3);
  EXPECT_TRUE(*gpu3->link.downtrained);
  EXPECT_EQ(s.gpus[6].nearest_nics.at(0).bdf, "0000:88:00.0");
  EXPECT_EQ(s.gpus[6].nearest_nics.at(0).pcie_path, report::PciePath::PIX);
  EXPECT_EQ(s.gpus[0].nearest_nics.size(), 2u);  // both ports of the ConnectX-6
  EXPECT_EQ(s.cpu.packages.size(), 2u);
  EXPECT_EQ(s.cpu.numa_nodes.at(1).distances, (std::vector<std::int64_t>{21, 10}));
  EXPECT_EQ(s.cpu.packages.at(1).numa_nodes, (std::vector<std::int64_t>{1}));
  EXPECT_TRUE(s.warnings.empty());
}

TEST(Fixtures, InventoryFieldsOfOneGpu) {
  auto s = read_fixture("baremetal-2s-8gpu-pcie");
  const auto* d = s.device("0000:05:00.0");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->vendor_id, "10de");
  EXPECT_EQ(d->device_id, "20f1");
  EXPECT_EQ(d->class_id, "030200");
  EXPECT_EQ(d->kind, report::PciKind::gpu);
  EXPECT_EQ(d->driver, "nvidia");
  EXPECT_EQ(d->parent_bdf, "0000:04:08.0");
  EXPECT_EQ(d->root_bus, "pci0000:00");
  EXPECT_EQ(d->numa_node, 0);
  EXPECT_EQ(d->local_cpus, "0-3");
  EXPECT_TRUE(d->iommu_group.has_value());
  EXPECT_DOUBLE_EQ(*d->link.max_gts, 16.0);
  EXPECT_EQ(*d->link.current_lanes, 16);
  EXPECT_FALSE(d->port_type.has_value());  // a 64-byte (unprivileged) config header only
  EXPECT_EQ(s.device("0000:00:02.0")->kind, report::PciKind::root_port);
  EXPECT_EQ(s.device("0000:01:00.0")->kind, report::PciKind::pcie_switch_port);
  EXPECT_EQ(s.device("0000:c4:00.0")->kind, report::PciKind::nvme);
  EXPECT_EQ(s.device("0000:0b:00.1")->kind, report::PciKind::infiniband);
}

TEST(Fixtures, ProxmoxGuestHidesLocalityAndTheEmulatedPortIsNoBottleneck) {
  auto s = read_fixture("proxmox-q35-8gpu-rootports");
  ASSERT_EQ(s.gpus.size(), 8u);
  for (const auto& g : s.gpus) EXPECT_FALSE(g.numa_node.has_value());  // numa_node -1
  for (const auto& p : s.gpu_pairs) EXPECT_EQ(p.path, "PHB");
  const auto* port = s.device("0000:00:1c.0");
  EXPECT_EQ(port->vendor_id.value_or("") + ":" + port->device_id.value_or(""), "1b36:000c");
  EXPECT_DOUBLE_EQ(*port->link.max_gts, 16.0);
  EXPECT_EQ(*port->link.max_lanes, 32);
  EXPECT_DOUBLE_EQ(*s.device("0000:01:00.0")->link.max_gts, 32.0);
  // The Gen5 GPU's own registers, not the port's synthetic 16 GT/s, bound the path.
  EXPECT_NEAR(*s.gpu_pairs.front().bottleneck_gbps, 63.02, 0.01);
}

TEST(Fixtures, RootBusGpusHaveUnknownLinks) {
  auto s = read_fixture("q35-rootbus-gpus");
  ASSERT_EQ(s.gpus.size(), 4u);
  for (const auto& g : s.gpus) {
    const auto* d = s.device(g.bdf);
    EXPECT_FALSE(d->link.current_gts.has_value());
    EXPECT_FALSE(d->link.current_lanes.has_value());
    EXPECT_FALSE(d->parent_bdf.has_value());
  }
  for (const auto& p : s.gpu_pairs) EXPECT_FALSE(p.bottleneck_gbps.has_value());
  EXPECT_TRUE(s.warnings.empty());  // "Unknown" and width 0 are data, not garbage
}

TEST(Fixtures, I440fxGuestIsConventionalPci) {
  auto s = read_fixture("i440fx-guest");
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_EQ(s.device("0000:00:1e.0")->kind, report::PciKind::other);  // a PCI-PCI bridge, not a PCIe port
  EXPECT_EQ(s.device("0000:01:01.0")->parent_bdf, "0000:00:1e.0");
  EXPECT_FALSE(s.device("0000:00:05.0")->link.max_gts.has_value());
  EXPECT_EQ(s.gpu_pairs.at(0).path, "PHB");
}

TEST(Fixtures, HgxNvlinkThroughNvSwitchesFromRecordedNvml) {
  auto s = read_fixture("hgx-h100-nvswitch");
  ASSERT_EQ(s.gpus.size(), 8u);
  EXPECT_EQ(s.nvml_source, report::NvmlSource::recorded);
  for (const auto& p : s.gpu_pairs) {
    EXPECT_EQ(p.nvlink_count, 18);
    EXPECT_EQ(p.path, "NV18");
    // NVML answers version 7 ("5.0") on Hopper: compute capability 9.0 makes it 18 x 25 GB/s, and
    // the Gen5 x16 PCIe figure keeps a name of its own.
    ASSERT_TRUE(p.bottleneck_gbps);
    EXPECT_DOUBLE_EQ(*p.bottleneck_gbps, 450.0);
    ASSERT_TRUE(p.pcie_bottleneck_gbps);
    EXPECT_NEAR(*p.pcie_bottleneck_gbps, 63.02, 0.01);
    ASSERT_TRUE(p.p2p);
    EXPECT_EQ(p.p2p->read, report::P2pCapability::ok);
  }
  EXPECT_EQ(pair_of(s, 0, 1)->pcie_path, report::PciePath::NODE);
  EXPECT_EQ(pair_of(s, 0, 4)->pcie_path, report::PciePath::SYS);
  EXPECT_EQ(s.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(s.gpus[0].compute_capability, "9.0");
  EXPECT_EQ(s.gpus[0].nvlinks.at(0).version, 7);
  EXPECT_EQ(s.gpus[0].memory_bytes, 85520809984);
  EXPECT_EQ(s.gpus[0].virtualization_mode, report::VirtualizationMode::none);
  EXPECT_EQ(s.gpus[0].nearest_nics.at(0).pcie_path, report::PciePath::PIX);
  // Recorded as root: bridges carry their PCIe port type.
  EXPECT_EQ(s.device("0000:16:00.0")->port_type, report::PciePortType::upstream);
  EXPECT_EQ(s.device("0000:17:00.0")->port_type, report::PciePortType::downstream);
  EXPECT_EQ(s.device("0000:15:01.0")->port_type, report::PciePortType::root_port);
  int switches = 0;
  for (const auto& d : s.pci_devices) switches += d.kind == report::PciKind::nvswitch;
  EXPECT_EQ(switches, 4);
}

TEST(Fixtures, OldKernelLinkStrings) {
  auto s = read_fixture("kernel-5.4-old-link-strings");
  const auto* idle = s.device("0000:04:00.0");
  EXPECT_DOUBLE_EQ(*idle->link.current_gts, 2.5);  // "2.5 GT/s"
  EXPECT_DOUBLE_EQ(*idle->link.max_gts, 8.0);      // "8 GT/s"
  EXPECT_TRUE(*idle->link.downtrained);
  const auto* empty_port = s.device("0000:02:18.0");
  EXPECT_FALSE(empty_port->link.current_gts.has_value());  // "Unknown speed"
  EXPECT_DOUBLE_EQ(*empty_port->link.max_gts, 8.0);
  EXPECT_TRUE(s.warnings.empty());
  EXPECT_EQ(s.gpu_pairs.at(0).path, "PIX");
  EXPECT_NEAR(*s.gpu_pairs.at(0).bottleneck_gbps, 15.75, 0.01);  // the idle GPU counts at its maximum
}

}  // namespace
}  // namespace interprobe
