// Garbage, truncated or missing sysfs files and symlink loops: the device stays in the inventory
// with nulls and a warning, and nothing throws. Each test mutates a copy of a fixture.
#include <gtest/gtest.h>

#include <random>

#include "probes/topology/pci_inventory.hpp"
#include "topology_test_support.hpp"

namespace interprobe {
namespace {

namespace fs = std::filesystem;
using topology_test::read_tree;
using topology_test::TempTree;

bool has_warning(const report::TopologySection& s, const std::string& needle) {
  for (const auto& w : s.warnings)
    if (w.find(needle) != std::string::npos) return true;
  return false;
}

TEST(Robustness, GarbageAndTruncatedAttributesBecomeNullsWithWarnings) {
  TempTree t("baremetal-2s-8gpu-pcie");
  auto gpu = t.device("0000:05:00.0");
  t.write(gpu / "vendor", "zzzz\n");
  t.write(gpu / "class", "");                               // truncated
  t.write(gpu / "current_link_speed", std::string("\x00\xff\xfe", 3));
  t.write(gpu / "max_link_width", "99999999999999999999\n");
  t.write(gpu / "numa_node", "-7\n");
  t.write(gpu / "local_cpulist", std::string(200000, '1'));  // beyond the attribute size limit
  auto s = read_tree(t.path());
  const auto* d = s.device("0000:05:00.0");
  ASSERT_TRUE(d) << "the device must stay in the inventory";
  EXPECT_FALSE(d->vendor_id);
  EXPECT_FALSE(d->class_id);
  EXPECT_FALSE(d->link.current_gts.has_value());
  EXPECT_FALSE(d->link.max_lanes.has_value());
  EXPECT_FALSE(d->numa_node.has_value());
  EXPECT_FALSE(d->local_cpus.has_value());
  EXPECT_EQ(d->device_id, "20f1");  // untouched attributes still read
  EXPECT_TRUE(has_warning(s, "0000:05:00.0: vendor: garbage 'zzzz'"));
  EXPECT_TRUE(has_warning(s, "0000:05:00.0: class: garbage ''"));
  EXPECT_TRUE(has_warning(s, "current_link_speed: garbage"));
  EXPECT_TRUE(has_warning(s, "max_link_width: garbage"));
  EXPECT_TRUE(has_warning(s, "numa_node: garbage '-7'"));
  EXPECT_TRUE(has_warning(s, "local_cpulist: too large"));
  // Without a vendor id it is no GPU any more: 7 GPUs, and their pairs still classify.
  EXPECT_EQ(s.gpus.size(), 7u);
  EXPECT_EQ(s.gpu_pairs.size(), 21u);
}

TEST(Robustness, MissingFilesAreNullsAndRequiredOnesWarn) {
  TempTree t("baremetal-2s-8gpu-pcie");
  auto gpu = t.device("0000:06:00.0");
  for (const char* f : {"device", "numa_node", "local_cpulist", "current_link_speed", "current_link_width", "driver", "iommu_group"})
    fs::remove(gpu / f);
  auto s = read_tree(t.path());
  const auto* d = s.device("0000:06:00.0");
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->device_id);
  EXPECT_FALSE(d->driver.has_value());
  EXPECT_FALSE(d->iommu_group.has_value());
  EXPECT_FALSE(d->link.current_gts.has_value());
  EXPECT_DOUBLE_EQ(*d->link.max_gts, 16.0);
  EXPECT_FALSE(d->link.downtrained.has_value());
  EXPECT_TRUE(has_warning(s, "0000:06:00.0: device: missing"));
  EXPECT_FALSE(has_warning(s, "0000:06:00.0: numa_node"));  // optional attributes may be absent
  EXPECT_EQ(d->kind, report::PciKind::gpu);
}

TEST(Robustness, SymlinkLoopsAndEscapesKeepTheDevice) {
  TempTree t("baremetal-2s-8gpu-pcie");
  auto devices = t.at("/sys/bus/pci/devices");
  // An entry that loops on itself, one that leaves the root, and a loop inside a device.
  fs::create_symlink("0000:ee:00.0", devices / "0000:ee:00.0");
  fs::create_symlink("../../../../../../../../../../etc", devices / "0000:ef:00.0");
  auto gpu = t.device("0000:09:00.0");
  t.relink(gpu / "vendor", "vendor");
  t.relink(gpu / "driver", "driver");
  fs::create_symlink("garbage", devices / "not-a-bdf");
  report::TopologySection s;
  ASSERT_NO_THROW(s = read_tree(t.path()));
  ASSERT_TRUE(s.device("0000:ee:00.0"));
  EXPECT_EQ(s.device("0000:ee:00.0")->kind, report::PciKind::other);
  EXPECT_TRUE(has_warning(s, "0000:ee:00.0: cannot resolve"));
  EXPECT_TRUE(has_warning(s, "symlink loop"));
  ASSERT_TRUE(s.device("0000:ef:00.0"));
  EXPECT_TRUE(has_warning(s, "0000:ef:00.0: link leaves the root"));
  EXPECT_TRUE(has_warning(s, "0000:09:00.0: vendor: symlink loop"));
  EXPECT_TRUE(has_warning(s, "not-a-bdf: not a PCI address"));
  EXPECT_EQ(s.device("0000:09:00.0")->device_id, "20f1");
}

TEST(Robustness, BrokenNumaAndCpuFiles) {
  TempTree t("baremetal-2s-8gpu-pcie");
  t.write(t.at("/sys/devices/system/node/node0/distance"), "10 banana\n");
  t.write(t.at("/sys/devices/system/node/node1/distance"), "10 21 31\n");
  t.write(t.at("/sys/devices/system/node/node0/meminfo"), "nothing here\n");
  t.write(t.at("/sys/devices/system/node/node1/cpulist"), "7-3\n");
  t.write(t.at("/sys/devices/system/cpu/online"), "all of them\n");
  auto s = read_tree(t.path());
  ASSERT_EQ(s.cpu.numa_nodes.size(), 2u);
  EXPECT_TRUE(s.cpu.numa_nodes[0].distances.empty());
  EXPECT_TRUE(s.cpu.numa_nodes[1].distances.empty());
  EXPECT_FALSE(s.cpu.numa_nodes[0].memory_bytes.has_value());
  EXPECT_FALSE(s.cpu.numa_nodes[1].cpus.has_value());
  EXPECT_TRUE(has_warning(s, "node0/distance: garbage"));
  EXPECT_TRUE(has_warning(s, "3 values for 2 nodes"));
  EXPECT_TRUE(has_warning(s, "cpu/online: garbage"));
}

TEST(Robustness, MalformedNvmlRecordingIsIgnoredWithAWarning) {
  TempTree t("hgx-h100-nvswitch");
  t.write(t.at("/nvml.json"), "{\"format\": \"interprobe-nvml-topology\", \"version\": 1, \"devices\": [{\"pci_bus_id\": 7}]}");
  auto s = read_tree(t.path());
  EXPECT_FALSE(s.nvml_source.has_value());
  ASSERT_TRUE(s.nvml_reason);
  EXPECT_NE(s.nvml_reason->find("devices[0].pci_bus_id"), std::string::npos) << *s.nvml_reason;
  EXPECT_TRUE(has_warning(s, "/nvml.json"));
  ASSERT_EQ(s.gpu_pairs.size(), 28u);
  EXPECT_EQ(s.gpu_pairs[0].nvlink_count, 0);  // no NVML: PCIe paths only
  EXPECT_EQ(s.gpu_pairs[0].path, "NODE");
}

TEST(Robustness, NoPciTreeAtAll) {
  TempTree t("i440fx-guest");
  fs::remove_all(t.at("/sys/bus/pci"));
  auto s = read_tree(t.path());
  EXPECT_TRUE(s.pci_devices.empty());
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_TRUE(has_warning(s, "/sys/bus/pci/devices: missing"));
}

// Random damage to every kind of file, many times over: never a throw, never a lost device.
TEST(Robustness, RandomDamageNeverThrowsOrDropsDevices) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    TempTree t(seed % 2 ? "kernel-5.4-old-link-strings" : "hgx-h100-nvswitch");
    std::mt19937 rng(seed);
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(t.at("/sys/devices")); it != fs::recursive_directory_iterator(); ++it)
      if (it->is_regular_file() || it->is_symlink()) files.push_back(it->path());
    files.push_back(t.at("/nvml.json"));
    for (const auto& f : files) {
      switch (rng() % 8) {
        case 0: t.write(f, ""); break;
        case 1: {
          std::string junk(rng() % 64, '\0');
          for (auto& c : junk) c = static_cast<char>(rng());
          t.write(f, junk);
          break;
        }
        case 2: fs::remove(f); break;
        case 3: t.relink(f, f.filename().string()); break;  // a loop
        default: break;
      }
    }
    std::size_t entries = 0;
    for (const auto& e : fs::directory_iterator(t.at("/sys/bus/pci/devices"))) entries += is_pci_bdf(e.path().filename().string());
    report::TopologySection s;
    ASSERT_NO_THROW(s = read_tree(t.path())) << "seed " << seed;
    EXPECT_EQ(s.pci_devices.size(), entries) << "seed " << seed;
    EXPECT_FALSE(s.warnings.empty()) << "seed " << seed;
  }
}

}  // namespace
}  // namespace interprobe
