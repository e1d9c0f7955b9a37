// hwloc agreement: --hwloc-xml builds the same PCIe classes as the sysfs tree and NVLink through
// NVSwitches; and hwloc pointed at a tree (HWLOC_FSROOT) sees the same devices, parent bridges and
// link bandwidths as our inventory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "interprobe/build_config.hpp"
#include "common/errors.hpp"
#include "common/hwloc_environment.hpp"
#include "probes/topology/hwloc_xml.hpp"
#include "probes/topology/pci_inventory.hpp"
#include "topology_test_support.hpp"

#if INTERPROBE_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace interprobe {
namespace {

using topology_test::fixture_dir;
using topology_test::pair_of;
using topology_test::read_fixture;

std::string xml_fixture(const std::string& name) { return (fixture_dir("") / (name + ".hwloc.xml")).string(); }

report::TopologySection from_xml(const std::string& name) {
  TopologyOptions options;
  options.hwloc_xml = xml_fixture(name);
  report::TopologySection s;
  read_topology(HostRoot(), options, s);
  return s;
}

TEST(NvlinkBandwidth, LinksFromMegabytesPerSecond) {
  EXPECT_EQ(nvlinks_from_bandwidth_mbps(0), 0);
  EXPECT_EQ(nvlinks_from_bandwidth_mbps(25000), 1);
  EXPECT_EQ(nvlinks_from_bandwidth_mbps(125000), 5);   // NVLink 2-4
  EXPECT_EQ(nvlinks_from_bandwidth_mbps(80000), 4);    // NVLink 1 (P100): 20000 per link
  EXPECT_EQ(nvlinks_from_bandwidth_mbps(100000), 4);   // ambiguous: read as NVLink 2+
}

#if INTERPROBE_HAVE_HWLOC

TEST(HwlocXml, PcieClassesMatchTheSysfsTree) {
  auto tree = read_fixture("baremetal-2s-8gpu-pcie");
  auto xml = from_xml("baremetal-2s-8gpu-pcie");
  EXPECT_EQ(xml.source, report::TopologySource::hwloc_xml);
  ASSERT_EQ(xml.gpus.size(), tree.gpus.size());
  ASSERT_EQ(xml.gpu_pairs.size(), tree.gpu_pairs.size());
  for (std::size_t i = 0; i < tree.gpu_pairs.size(); ++i) {
    EXPECT_EQ(xml.gpu_pairs[i].a_bdf, tree.gpu_pairs[i].a_bdf);
    EXPECT_EQ(xml.gpu_pairs[i].b_bdf, tree.gpu_pairs[i].b_bdf);
    EXPECT_EQ(xml.gpu_pairs[i].pcie_path, tree.gpu_pairs[i].pcie_path) << tree.gpu_pairs[i].a_bdf << " " << tree.gpu_pairs[i].b_bdf;
    ASSERT_TRUE(xml.gpu_pairs[i].bottleneck_gbps);
    // hwloc keeps current link rates only: equal here, where no link is idle-downtrained.
    EXPECT_NEAR(*xml.gpu_pairs[i].bottleneck_gbps, *tree.gpu_pairs[i].bottleneck_gbps, 0.01);
  }
  EXPECT_EQ(xml.cpu.packages.size(), 2u);
  EXPECT_EQ(xml.cpu.numa_nodes.size(), 2u);
  EXPECT_EQ(xml.cpu.numa_nodes.at(0).distances, (std::vector<std::int64_t>{10, 21}));
  EXPECT_EQ(xml.gpus.at(4).numa_node, 1);
}

TEST(HwlocXml, NvlinkThroughNvSwitchesFromTheBandwidthMatrix) {
  auto xml = from_xml("hgx-h100-nvswitch");
  ASSERT_EQ(xml.gpus.size(), 8u);
  for (const auto& p : xml.gpu_pairs) {
    EXPECT_EQ(p.nvlink_count, 18) << p.a_bdf << " " << p.b_bdf;
    EXPECT_EQ(p.path, "NV18");
    ASSERT_TRUE(p.bottleneck_gbps);  // no link version in hwloc's XML: the H100's name decides 25 GB/s
    EXPECT_DOUBLE_EQ(*p.bottleneck_gbps, 450.0);
    EXPECT_FALSE(p.p2p.has_value());
  }
  EXPECT_EQ(pair_of(xml, 0, 1)->pcie_path, report::PciePath::NODE);
  EXPECT_EQ(pair_of(xml, 3, 4)->pcie_path, report::PciePath::SYS);
  EXPECT_EQ(xml.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(xml.gpus[0].uuid, "GPU-4d6b0a6e-6c1d-4b1e-9a7c-000000000000");
  EXPECT_EQ(xml.gpus[0].nearest_nics.at(0).pcie_path, report::PciePath::PIX);
}

TEST(HwlocXml, BadFilesAreInputErrors) {
  TopologyOptions options;
  options.hwloc_xml = "/nonexistent/topo.xml";
  report::TopologySection s;
  EXPECT_THROW(read_topology(HostRoot(), options, s), InputError);
  options.hwloc_xml = (fixture_dir("hgx-h100-nvswitch") / "nvml.json").string();  // not XML
  EXPECT_THROW(read_topology(HostRoot(), options, s), InputError);
}

struct HwlocPci {
  std::string parent;  // the PCI bridge above, "" on a root bus
  double gbps = 0;
};

// What hwloc itself reports for a tree: every PCI function and bridge, with parent and rate.
std::map<std::string, HwlocPci> hwloc_view(const std::string& root) {
  HwlocEnvironment environment{HostRoot(root)};
  hwloc_topology_t t;
  hwloc_topology_init(&t);
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
  hwloc_topology_load(t);
  std::map<std::string, HwlocPci> out;
  auto bdf = [](const hwloc_obj_attr_u::hwloc_pcidev_attr_s& p) {
    char b[32];
    std::snprintf(b, sizeof b, "%04x:%02x:%02x.%x", p.domain, p.bus, p.dev, p.func);
    return std::string(b);
  };
  auto record = [&](hwloc_obj_t obj, const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci) {
    HwlocPci v;
    v.gbps = pci.linkspeed;
    if (obj->parent && obj->parent->type == HWLOC_OBJ_BRIDGE && obj->parent->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI)
      v.parent = bdf(obj->parent->attr->bridge.upstream.pci);
    out[bdf(pci)] = v;
  };
  for (hwloc_obj_t o = hwloc_get_next_pcidev(t, nullptr); o; o = hwloc_get_next_pcidev(t, o)) record(o, o->attr->pcidev);
  for (hwloc_obj_t o = hwloc_get_next_bridge(t, nullptr); o; o = hwloc_get_next_bridge(t, o))
    if (o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) record(o, o->attr->bridge.upstream.pci);
  hwloc_topology_destroy(t);
  return out;
}

class HwlocAgrees : public ::testing::TestWithParam<const char*> {};

TEST_P(HwlocAgrees, SameDevicesParentsAndLinkBandwidths) {
  std::string root = fixture_dir(GetParam()).string();
  auto ours = read_pci_inventory(HostRoot(root));
  auto theirs = hwloc_view(root);
  ASSERT_EQ(ours.size(), theirs.size());
  for (const auto& d : ours) {
    auto it = theirs.find(d.bdf);
    ASSERT_NE(it, theirs.end()) << d.bdf << " missing from hwloc's view";
    EXPECT_EQ(d.parent_bdf.value_or(""), it->second.parent) << d.bdf;
    // hwloc computes GT/s x encoding x width / 8 from the current link, as we do.
    EXPECT_NEAR(d.link.current_gbps.value_or(0), it->second.gbps, 0.01) << d.bdf;
  }
}

INSTANTIATE_TEST_SUITE_P(Topology, HwlocAgrees,
                         ::testing::Values("baremetal-2s-8gpu-pcie", "hgx-h100-nvswitch", "proxmox-q35-8gpu-rootports",
                                           "kernel-5.4-old-link-strings", "live-firecracker-capture"));

#else

TEST(HwlocXml, CompiledOutSaysSo) {
  TopologyOptions options;
  options.hwloc_xml = xml_fixture("hgx-h100-nvswitch");
  report::TopologySection s;
  EXPECT_THROW(read_topology(HostRoot(), options, s), UnsupportedError);
}

#endif

}  // namespace
}  // namespace interprobe
