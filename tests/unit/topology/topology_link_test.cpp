// Link attributes as the kernel spells them, link bandwidth in hwloc's convention, config space.
#include <gtest/gtest.h>

#include "probes/topology/pci_express.hpp"
#include "probes/topology/pci_inventory.hpp"
#include "probes/topology/pci_link.hpp"

namespace interprobe {
namespace {

TEST(LinkSpeed, BothKernelSpellingsParse) {
  EXPECT_DOUBLE_EQ(*parse_link_speed_gts("8.0 GT/s PCIe").value, 8.0);
  EXPECT_DOUBLE_EQ(*parse_link_speed_gts("8 GT/s").value, 8.0);
  EXPECT_DOUBLE_EQ(*parse_link_speed_gts("2.5 GT/s PCIe\n").value, 2.5);
  EXPECT_DOUBLE_EQ(*parse_link_speed_gts("5 GT/s").value, 5.0);
  EXPECT_DOUBLE_EQ(*parse_link_speed_gts("32.0 GT/s PCIe").value, 32.0);
  EXPECT_DOUBLE_EQ(*parse_link_speed_gts("64.0 GT/s PCIe").value, 64.0);
}

TEST(LinkSpeed, UnknownIsDataAndGarbageIsFlagged) {
  for (const char* unknown : {"Unknown", "Unknown speed", "unknown\n"}) {
    auto a = parse_link_speed_gts(unknown);
    EXPECT_FALSE(a.value) << unknown;
    EXPECT_FALSE(a.garbage) << unknown;
  }
  for (const char* garbage : {"", "fast", "8.0 GB/s", "8.0 GT/s PCIe extra", "-8 GT/s", "nan GT/s", "\x01\x02"}) {
    auto a = parse_link_speed_gts(garbage);
    EXPECT_FALSE(a.value) << garbage;
    EXPECT_TRUE(a.garbage) << garbage;
  }
}

TEST(LinkWidth, ZeroMeansUnknownAndOutOfRangeIsGarbage) {
  EXPECT_EQ(*parse_link_width("16").value, 16);
  EXPECT_FALSE(parse_link_width("0").value);
  EXPECT_FALSE(parse_link_width("0").garbage);
  EXPECT_TRUE(parse_link_width("255").garbage);
  EXPECT_TRUE(parse_link_width("x16").garbage);
}

TEST(LinkGbps, HwlocConvention) {
  EXPECT_NEAR(link_gbps(2.5, 1), 0.25, 1e-9);       // Gen1 8b/10b
  EXPECT_NEAR(link_gbps(5.0, 16), 8.0, 1e-9);       // Gen2
  EXPECT_NEAR(link_gbps(8.0, 16), 15.7538, 1e-3);   // Gen3 128b/130b
  EXPECT_NEAR(link_gbps(16.0, 16), 31.5077, 1e-3);  // Gen4
  EXPECT_NEAR(link_gbps(32.0, 16), 63.0154, 1e-3);  // Gen5
  EXPECT_NEAR(link_gbps(64.0, 16), 121.0, 1e-9);    // Gen6 FLIT 242/256
}

TEST(Link, CompleteLinkFlagsDowntrainingInSpeedOrWidth) {
  report::PciLink l;
  l.current_gts = 16;
  l.max_gts = 16;
  l.current_lanes = 8;
  l.max_lanes = 16;
  complete_link(l);
  EXPECT_TRUE(*l.downtrained);
  EXPECT_NEAR(*l.current_gbps, 15.75, 0.01);
  EXPECT_NEAR(*l.max_gbps, 31.5, 0.01);
  l.current_lanes = 16;
  complete_link(l);
  EXPECT_FALSE(*l.downtrained);
  l.current_gts.reset();  // Unknown current speed: nothing to compare
  complete_link(l);
  EXPECT_FALSE(l.downtrained.has_value());
  EXPECT_FALSE(l.current_gbps.has_value());
}

TEST(Bdf, ValidatesAndOrdersNumerically) {
  EXPECT_TRUE(is_pci_bdf("0000:43:00.0"));
  EXPECT_TRUE(is_pci_bdf("10000:e0:1f.7"));  // VMD domains have five digits
  EXPECT_FALSE(is_pci_bdf("0000:43:00.8"));
  EXPECT_FALSE(is_pci_bdf("0000:43:00"));
  EXPECT_FALSE(is_pci_bdf("../../etc"));
  EXPECT_TRUE(bdf_less("0000:09:00.0", "0000:0a:00.0"));
  EXPECT_TRUE(bdf_less("0000:ff:00.0", "0001:00:00.0"));
  EXPECT_FALSE(bdf_less("0000:0a:00.0", "0000:09:00.0"));
}

std::vector<std::uint8_t> header_with_caps() {
  std::vector<std::uint8_t> c(256, 0);
  c[0x06] = 0x10;  // capability list present
  c[0x34] = 0x40;
  c[0x40] = 0x10;  // PCI Express -> 0x60
  c[0x41] = 0x60;
  c[0x42] = 0x02 | (6 << 4);          // downstream port
  c[0x4c] = 0x04;                     // link capabilities 0x104: 16 GT/s (code 4), x16 (bits 9:4)
  c[0x4d] = 0x01;
  c[0x52] = 0x03 | (8 << 4);          // link status: 8 GT/s x8
  c[0x60] = 0x09;                     // vendor specific, last
  c[0x61] = 0x00;
  c[0x62] = 0x08;
  c[0x63] = 'P';
  return c;
}

TEST(ConfigSpace, WalksCapabilitiesAndDecodesPcie) {
  auto caps = parse_pci_capabilities(header_with_caps());
  ASSERT_EQ(caps.size(), 2u);
  EXPECT_EQ(caps[0].id, 0x10);
  EXPECT_EQ(caps[1].id, 0x09);
  EXPECT_EQ(caps[1].offset, 0x60);
  ASSERT_EQ(caps[1].body.size(), 8u);
  EXPECT_EQ(caps[1].body[3], 'P');
  auto pcie = decode_pcie_capability(header_with_caps());
  ASSERT_TRUE(pcie);
  EXPECT_EQ(port_type_name(pcie->port_type), report::PciePortType::downstream);
  EXPECT_DOUBLE_EQ(*pcie->max_gts, 16.0);
  EXPECT_EQ(*pcie->max_lanes, 16);
  EXPECT_DOUBLE_EQ(*pcie->current_gts, 8.0);
  EXPECT_EQ(*pcie->current_lanes, 8);
}

TEST(ConfigSpace, HostileListsEndWithoutHanging) {
  auto c = header_with_caps();
  c[0x61] = 0x40;  // the PCIe capability points back at itself: a loop
  c[0x41] = 0x40;
  auto caps = parse_pci_capabilities(c);
  EXPECT_EQ(caps.size(), 1u);
  auto out_of_range = header_with_caps();
  out_of_range[0x61] = 0xfe;  // pointer past what was read
  out_of_range.resize(0x70);
  EXPECT_LE(parse_pci_capabilities(out_of_range).size(), 2u);
  auto full = header_with_caps();
  std::vector<std::uint8_t> unprivileged(full.begin(), full.begin() + 64);
  EXPECT_TRUE(parse_pci_capabilities(unprivileged).empty());
  EXPECT_FALSE(decode_pcie_capability(unprivileged));
}

}  // namespace
}  // namespace interprobe
