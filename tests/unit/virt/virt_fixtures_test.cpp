// Golden tests: every fixture under tests/fixtures/virt gives the verdict its README names.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "common/cpuid.hpp"
#include "common/host_root.hpp"
#include "probes/virt/virt_probe.hpp"
#include "virt_test_support.hpp"

namespace interprobe {
namespace {

struct Golden {
  const char* fixture;
  const char* hypervisor;
  const char* container;
  std::optional<std::string> product;
  const char* confidence;
  std::optional<std::string> machine_type;
  std::optional<std::string> xen_role;
};

const Golden kGolden[] = {
    {"bare-metal-hgx", "none", "none", std::nullopt, "high", std::nullopt, std::nullopt},
    {"proxmox-kvm-q35", "kvm", "none", "Proxmox VE", "high", "q35", std::nullopt},
    {"qemu-tcg-i440fx", "qemu", "none", "QEMU", "medium", "i440fx", std::nullopt},
    {"firecracker", "kvm", "none", "Firecracker", "high", "microvm", std::nullopt},
    {"firecracker-docker-bhyve", "bhyve", "docker", "Firecracker", "medium", "microvm", std::nullopt},
    {"cloud-hypervisor", "kvm", "none", "Cloud Hypervisor", "high", "microvm", std::nullopt},
    {"vmware", "vmware", "none", "VMware", "high", std::nullopt, std::nullopt},
    {"hyperv-azure", "microsoft", "none", "Azure", "high", std::nullopt, std::nullopt},
    {"xen-hvm", "xen", "none", "Xen", "high", "i440fx", "domU"},
    {"xen-pv", "xen", "none", "Xen", "high", std::nullopt, "domU"},
    {"xen-dom0", "none", "none", "Xen", "high", std::nullopt, "dom0"},
    {"aws-nitro", "amazon", "none", "AWS EC2 (Nitro)", "high", std::nullopt, std::nullopt},
    {"aws-metal", "none", "none", "AWS EC2 bare metal", "high", std::nullopt, std::nullopt},
    {"gce", "google", "none", "Google Compute Engine", "high", "i440fx", std::nullopt},
    {"docker-in-kvm", "kvm", "docker", "QEMU", "high", "q35", std::nullopt},
    {"podman", "none", "podman", std::nullopt, "high", std::nullopt, std::nullopt},
    {"lxc", "none", "lxc", std::nullopt, "high", std::nullopt, std::nullopt},
    {"wsl2", "microsoft", "wsl", "WSL 2", "medium", std::nullopt, std::nullopt},
};

void PrintTo(const Golden& g, std::ostream* os) { *os << g.fixture; }

class VirtGolden : public ::testing::TestWithParam<Golden> {};

TEST_P(VirtGolden, VerdictMatchesTheEnvironmentItImitates) {
  const Golden& g = GetParam();
  report::VirtSection v = testing_support::detect_fixture(g.fixture);
  EXPECT_EQ(v.hypervisor, g.hypervisor);
  EXPECT_EQ(v.container, g.container);
  EXPECT_EQ(v.product, g.product);
  EXPECT_EQ(v.confidence, report::parse_enum<report::Confidence>(g.confidence)) << testing_support::dump_evidence(v);
  EXPECT_EQ(v.machine_type, g.machine_type);
  EXPECT_EQ(v.xen_role, g.xen_role);
  EXPECT_GE(v.evidence.size(), 3u);
  for (const auto& e : v.evidence) EXPECT_EQ(e.implies.find("warning:"), std::string::npos) << e.source << ": " << e.implies;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, VirtGolden, ::testing::ValuesIn(kGolden),
                         [](const ::testing::TestParamInfo<Golden>& param_info) {
                           std::string name = param_info.param.fixture;
                           for (auto& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(VirtFixtures, ContainerConfidenceCountsIndependentMarkers) {
  EXPECT_EQ(testing_support::detect_fixture("docker-in-kvm").container_confidence, report::Confidence::high);  // file + cgroup
  EXPECT_EQ(testing_support::detect_fixture("podman").container_confidence, report::Confidence::high);  // file + PID 1 env
  EXPECT_EQ(testing_support::detect_fixture("firecracker-docker-bhyve").container_confidence, report::Confidence::medium);
  EXPECT_EQ(testing_support::detect_fixture("lxc").container_confidence, report::Confidence::medium);  // one family, two files
  EXPECT_EQ(testing_support::detect_fixture("bare-metal-hgx").container_confidence, report::Confidence::medium);
}

TEST(VirtFixtures, ProxmoxMachineVersionComesFromDmi) {
  auto v = testing_support::detect_fixture("proxmox-kvm-q35");
  EXPECT_EQ(v.machine_version, std::optional<std::string>("pc-q35-8.1"));
  EXPECT_TRUE(v.conflicts.empty());
}

TEST(VirtFixtures, TcgWithoutHypervisorBitIsAConflict) {
  auto v = testing_support::detect_fixture("qemu-tcg-i440fx");
  ASSERT_FALSE(v.conflicts.empty());
  EXPECT_NE(v.conflicts.front().find("hypervisor bit is clear"), std::string::npos) << v.conflicts.front();
}

TEST(VirtFixtures, FirecrackerWithBhyveSignatureExplainsItself) {
  auto v = testing_support::detect_fixture("firecracker-docker-bhyve");
  ASSERT_EQ(v.conflicts.size(), 1u);
  EXPECT_NE(v.conflicts.front().find("Firecracker"), std::string::npos);
  bool product_line = false;
  for (const auto& e : v.evidence)
    if (e.source == "product") product_line = e.implies.find("8086:0d57") != std::string::npos &&
                                              e.implies.find("CPUID decides") != std::string::npos;
  EXPECT_TRUE(product_line) << testing_support::dump_evidence(v);
}

TEST(VirtFixtures, WithoutAcpiFirecrackerIsNamedFromPciAndMissingDmi) {
  // The ACPI header is root-only: remove it and the PCI layout alone must name the product.
  testing_support::TempTree tree("firecracker");
  tree.remove("sys/firmware/acpi/tables/FACP");
  auto v = testing_support::detect_tree(tree.path());
  EXPECT_EQ(v.product, std::optional<std::string>("Firecracker"));
  EXPECT_EQ(v.hypervisor, "kvm");
  EXPECT_EQ(v.confidence, report::Confidence::high);  // CPUID + PCI ids
}

TEST(VirtFixtures, AwsMetalFallsBackToTheProductNameWithoutSmbios) {
  testing_support::TempTree tree("aws-metal");
  tree.remove("sys/firmware/dmi/entries/0-0/raw");
  auto v = testing_support::detect_tree(tree.path());
  EXPECT_EQ(v.hypervisor, "none");
  EXPECT_EQ(v.product, std::optional<std::string>("AWS EC2 bare metal"));
  tree.write("sys/class/dmi/id/product_name", "p5.48xlarge\n");
  EXPECT_EQ(testing_support::detect_tree(tree.path()).hypervisor, "amazon");
}

}  // namespace
}  // namespace interprobe
