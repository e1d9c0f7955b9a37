// Findings from the topology section, on the fixtures.
#include <gtest/gtest.h>

#include <algorithm>

#include "report/analysis/findings.hpp"
#include "topology_test_support.hpp"

namespace interprobe {
namespace {

std::vector<report::Finding> findings_of(report::TopologySection s) {
  report::Report r;
  r.topology = std::move(s);
  return analysis::derive_findings(r);
}

const report::Finding* find(const std::vector<report::Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

TEST(TopologyRules, BareMetalNarrowLinkAndFarPairs) {
  auto fs = findings_of(topology_test::read_fixture("baremetal-2s-8gpu-pcie"));
  const auto* narrow = find(fs, "topology.link_downtrained");
  ASSERT_TRUE(narrow);
  EXPECT_NE(narrow->title.find("0000:0a:00.0"), std::string::npos) << narrow->title;
  EXPECT_NE(narrow->title.find("x8"), std::string::npos);
  const auto* far = find(fs, "topology.pairs_beyond_nccl_p2p");
  ASSERT_TRUE(far);
  EXPECT_NE(far->title.find("21 of 28"), std::string::npos) << far->title;  // 2 PHB + 3 NODE + 16 SYS
  const auto* nic = find(fs, "topology.gpu_far_from_nic");
  ASSERT_TRUE(nic);
  EXPECT_NE(nic->title.find("GPU7"), std::string::npos) << nic->title;
  // One finding for every GPU far from its NIC, the GPUs listed in `affected`.
  EXPECT_EQ(std::count_if(fs.begin(), fs.end(), [](const auto& f) { return f.id == "topology.gpu_far_from_nic"; }), 1);
  EXPECT_FALSE(nic->affected.empty());
  EXPECT_EQ(narrow->affected, std::vector<std::string>{"0000:0a:00.0"});
  EXPECT_FALSE(find(fs, "topology.p2p_not_supported"));  // no NVML data: nothing claimed
  EXPECT_FALSE(find(fs, "topology.sysfs_unreadable"));
}

TEST(TopologyRules, IdleGpuSpeedIsNoFinding) {
  auto fs = findings_of(topology_test::read_fixture("kernel-5.4-old-link-strings"));
  EXPECT_FALSE(find(fs, "topology.link_downtrained"));  // 2.5 GT/s at idle, full width
}

TEST(TopologyRules, RefusedP2pFromNvml) {
  auto s = topology_test::read_fixture("hgx-h100-nvswitch");
  EXPECT_FALSE(find(findings_of(s), "topology.p2p_not_supported"));
  EXPECT_FALSE(find(findings_of(s), "topology.pairs_beyond_nccl_p2p"));  // all NVLinked
  s.gpu_pairs[0].p2p->read = report::P2pCapability::not_supported;
  s.gpu_pairs[1].p2p->read = report::P2pCapability::chipset_not_supported;
  auto fs = findings_of(s);
  const auto* f = find(fs, "topology.p2p_not_supported");
  ASSERT_TRUE(f);
  EXPECT_NE(f->title.find("2 of 28"), std::string::npos) << f->title;
  EXPECT_EQ(f->severity, report::Severity::warn);
  // The same status in a report that says NVML was not used (the seed fixture's, constructed):
  // the finding does not cite NVML, it says where the status came from.
  s.nvml_source.reset();
  s.nvml_reason = "constructed for a fixture";
  auto constructed_findings = findings_of(s);  // kept: `find` points into it
  const auto* constructed = find(constructed_findings, "topology.p2p_not_supported");
  ASSERT_TRUE(constructed);
  EXPECT_EQ(constructed->title.find("NVML refuses"), std::string::npos) << constructed->title;
  EXPECT_NE(constructed->title.find("NVML was not used (constructed for a fixture)"), std::string::npos)
      << constructed->title;
}

}  // namespace
}  // namespace interprobe
