// NVLink per-link rates from NVML's nvmlNvlinkVersion_t and the architecture (docs/reference.md §12),
// and the pair bottleneck the topology derives from them.
#include <gtest/gtest.h>

#include "probes/topology/nvlink_rate.hpp"
#include "probes/topology/nvml_topology.hpp"
#include "probes/topology/topology_probe.hpp"

namespace interprobe {
namespace {

// A pair of GPUs on one root bus joined by `links` direct NVLinks, as NVML would describe them.
report::TopologySection nvlinked_pair(const std::string& name, std::optional<std::string> cc, std::int64_t version, int links) {
  report::TopologySection s;
  for (const char* bdf : {"0000:18:00.0", "0000:2a:00.0"}) {
    report::PciDevice d;
    d.bdf = bdf;
    d.kind = report::PciKind::gpu;
    d.root_bus = "pci0000:00";
    d.link.current_gbps = 63.0;
    s.pci_devices.push_back(d);
  }
  NvmlTopology nvml;
  nvml.source = report::NvmlSource::recorded;
  for (int g = 0; g < 2; ++g) {
    NvmlGpuRecord rec;
    rec.bdf = s.pci_devices[static_cast<std::size_t>(g)].bdf;
    rec.name = name;
    rec.compute_capability = cc;
    for (int l = 0; l < links; ++l) {
      report::NvLinkInfo info;
      info.link = l;
      info.active = true;
      info.version = version;
      info.remote_bdf = s.pci_devices[static_cast<std::size_t>(1 - g)].bdf;
      info.remote_kind = report::NvLinkRemoteKind::gpu;
      rec.nvlinks.push_back(info);
    }
    nvml.gpus.push_back(rec);
  }
  derive_gpu_topology(s, &nvml);
  return s;
}

TEST(NvlinkRate, NvmlVersionIsTheEnumNotTheGeneration) {
  EXPECT_EQ(nvlink_gbps_per_link(1, std::nullopt, std::nullopt), 20.0);  // 1.0, P100
  for (int v : {2, 3, 4, 5, 6}) EXPECT_EQ(nvlink_gbps_per_link(v, std::nullopt, std::nullopt), 25.0) << v;  // 2.0 .. 4.0
  EXPECT_EQ(nvlink_gbps_per_link(7, "10.0", "NVIDIA B200"), 50.0);   // 5.0 on Blackwell
  EXPECT_EQ(nvlink_gbps_per_link(7, "9.0", "NVIDIA H100 80GB HBM3"), 25.0);  // what Hopper reports: NVLink 4
  EXPECT_EQ(nvlink_gbps_per_link(7, std::nullopt, "NVIDIA H200"), 25.0);   // a recording without the capability
  EXPECT_EQ(nvlink_gbps_per_link(7, std::nullopt, "NVIDIA B200"), 50.0);
  EXPECT_FALSE(nvlink_gbps_per_link(7, std::nullopt, "Some Future GPU"));  // 7 alone does not decide
  EXPECT_EQ(nvlink_gbps_per_link(std::nullopt, "8.0", std::nullopt), 25.0);
  EXPECT_FALSE(nvlink_gbps_per_link(std::nullopt, std::nullopt, std::nullopt));
}

TEST(NvlinkRate, ComputeCapabilityIsMajorDotMinor) {
  EXPECT_EQ(compute_capability_major("9.0"), 9);
  EXPECT_EQ(compute_capability_major("10.0"), 10);
  for (const char* bad : {"", "9", "9.", ".0", "x.0", "100.0", "9.0.1", "9.0a"}) EXPECT_FALSE(compute_capability_major(std::string(bad))) << bad;
}

TEST(NvlinkRate, PairBottleneckIsLinksTimesRateAndThePcieFigureKeepsItsName) {
  struct Case {
    const char* name;
    const char* cc;
    std::int64_t version;
    int links;
    double gbps;
  };
  // A100 SXM: NVLink 3.0 (version 4) x 12; H100 SXM: NVLink 4 reported as 7 x 18; B200: 5.0 x 18.
  for (const Case& c : {Case{"NVIDIA A100-SXM4-80GB", "8.0", 4, 12, 300.0}, Case{"NVIDIA H100 80GB HBM3", "9.0", 7, 18, 450.0},
                        Case{"NVIDIA H100 80GB HBM3", "9.0", 6, 18, 450.0}, Case{"NVIDIA B200", "10.0", 7, 18, 900.0}}) {
    auto s = nvlinked_pair(c.name, c.cc, c.version, c.links);
    ASSERT_EQ(s.gpu_pairs.size(), 1u);
    const auto& p = s.gpu_pairs[0];
    EXPECT_EQ(p.nvlink_count, c.links) << c.name;
    ASSERT_TRUE(p.bottleneck_gbps) << c.name;
    EXPECT_DOUBLE_EQ(*p.bottleneck_gbps, c.gbps) << c.name;
    ASSERT_TRUE(p.pcie_bottleneck_gbps) << c.name;
    EXPECT_DOUBLE_EQ(*p.pcie_bottleneck_gbps, 63.0) << c.name;
    EXPECT_EQ(s.gpus[0].compute_capability, std::optional<std::string>(c.cc));
  }
}

TEST(NvlinkRate, AnUnknownRateLeavesTheBottleneckNullAndSaysWhyOnce) {
  auto s = nvlinked_pair("Some Future GPU", std::nullopt, 7, 18);
  ASSERT_EQ(s.gpu_pairs.size(), 1u);
  EXPECT_FALSE(s.gpu_pairs[0].bottleneck_gbps);
  EXPECT_TRUE(s.gpu_pairs[0].pcie_bottleneck_gbps);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("NVLink rate is unknown"), std::string::npos) << s.warnings[0];
}

}  // namespace
}  // namespace interprobe
