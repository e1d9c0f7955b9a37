// The GPU passthrough audit on fixtures, the findings it leads to, and the unprivileged view.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "report/analysis/findings.hpp"
#include "virt_test_support.hpp"

namespace interprobe {
namespace {

using testing_support::detect_fixture;
using testing_support::detect_tree;
using testing_support::TempTree;

const report::GpuPassthrough& gpu(const report::VirtSection& v, const std::string& bdf) {
  auto it = std::find_if(v.gpus.begin(), v.gpus.end(), [&](const auto& g) { return g.bdf == bdf; });
  if (it == v.gpus.end()) throw std::runtime_error("no GPU " + bdf);
  return *it;
}

std::vector<report::Finding> findings_for(const report::VirtSection& v) {
  report::Report r;
  r.virtualization = v;
  return analysis::derive_findings(r);
}

const report::Finding* finding(const std::vector<report::Finding>& all, const std::string& id) {
  for (const auto& f : all)
    if (f.id == id) return &f;
  return nullptr;
}

// A replayed tree with a recorded nvml.json gives the same NVML view as the live machine:
// virtualization mode, memory and BAR1 size (the HGX fixture records no BAR sizes in sysfs).
TEST(VirtAudit, RecordedNvmlFillsModeMemoryAndBar1) {
  auto v = detect_tree(std::filesystem::path(INTERPROBE_FIXTURES) / "topology" / "hgx-h100-nvswitch");
  ASSERT_EQ(v.gpus.size(), 8u);
  for (const auto& g : v.gpus) {
    EXPECT_FALSE(g.nvml_reason.has_value()) << g.bdf << ": " << g.nvml_reason.value_or("");
    EXPECT_EQ(g.nvml_virtualization_mode, report::VirtualizationMode::none) << g.bdf;
    EXPECT_EQ(g.memory_bytes, 85520809984) << g.bdf;
    EXPECT_EQ(g.bar1_bytes, std::int64_t{128} << 30) << g.bdf;
    EXPECT_EQ(g.large_bar, true) << g.bdf;
  }
  // Without a recording the reason says so instead of guessing.
  auto bare = detect_fixture("proxmox-kvm-q35");
  ASSERT_FALSE(bare.gpus.empty());
  EXPECT_NE(bare.gpus[0].nvml_reason.value_or("").find("/nvml.json"), std::string::npos) << bare.gpus[0].nvml_reason.value_or("");
}

TEST(VirtAudit, ProxmoxGpusBehindEmulatedPortAndOnTheRootBus) {
  auto v = detect_fixture("proxmox-kvm-q35");
  ASSERT_EQ(v.gpus.size(), 2u);
  const auto& behind_port = gpu(v, "0000:01:00.0");
  EXPECT_EQ(behind_port.attachment, report::Attachment::emulated_root_port);
  EXPECT_EQ(behind_port.link_synthetic, std::optional<bool>(true));
  EXPECT_EQ(behind_port.port_max_gts, std::optional<double>(16.0));
  EXPECT_EQ(behind_port.gpu_max_gts, std::optional<double>(32.0));
  EXPECT_EQ(behind_port.p2p_clique, report::P2pClique::absent);
  EXPECT_FALSE(behind_port.numa_exposed);
  EXPECT_EQ(behind_port.bar1_bytes, std::optional<std::int64_t>(128ll << 30));
  ASSERT_EQ(behind_port.bars.size(), 3u);
  const auto& on_root = gpu(v, "0000:00:10.0");
  EXPECT_EQ(on_root.attachment, report::Attachment::root_bus_integrated);
  EXPECT_EQ(on_root.link_synthetic, std::optional<bool>(true));

  auto f = findings_for(v);
  EXPECT_NE(finding(f, "virt.p2p_clique_missing"), nullptr);
  ASSERT_NE(finding(f, "virt.gpu_numa_hidden"), nullptr);
  EXPECT_EQ(finding(f, "virt.gpu_numa_hidden")->severity, report::Severity::warn);  // 2 guest NUMA nodes
  ASSERT_NE(finding(f, "virt.emulated_port_slower_than_gpu"), nullptr);
  EXPECT_EQ(finding(f, "virt.emulated_port_slower_than_gpu")->title,
            "emulated root port advertises 16 GT/s above a Gen5 GPU: NCCL will model Gen4 (1 GPU(s))");
  EXPECT_EQ(finding(f, "virt.emulated_port_slower_than_gpu")->affected, std::vector<std::string>{"0000:01:00.0"});
  ASSERT_NE(finding(f, "virt.gpu_link_zeroed"), nullptr);
  EXPECT_EQ(finding(f, "virt.gpu_link_zeroed")->affected, std::vector<std::string>{"0000:00:10.0"});
  EXPECT_EQ(finding(f, "virt.i440fx_conventional_pci"), nullptr);
}

// One cause, one finding: eight GPUs behind eight emulated 16 GT/s ports are one warning that
// lists all eight (before, eight identical warnings).
TEST(VirtAudit, ProxmoxEightGpusGiveOneEmulatedPortFinding) {
  auto v = detect_tree(std::filesystem::path(INTERPROBE_FIXTURES) / "topology" / "proxmox-q35-8gpu-rootports");
  ASSERT_EQ(v.gpus.size(), 8u);
  auto f = findings_for(v);
  auto n = std::count_if(f.begin(), f.end(), [](const auto& x) { return x.id == "virt.emulated_port_slower_than_gpu"; });
  ASSERT_EQ(n, 1);
  const auto* slow = finding(f, "virt.emulated_port_slower_than_gpu");
  EXPECT_EQ(slow->affected.size(), 8u);
  EXPECT_EQ(slow->affected.front(), "0000:01:00.0");
  EXPECT_EQ(slow->affected.back(), "0000:08:00.0");
  EXPECT_EQ(std::get<report::ValueList>(slow->evidence.at("gpus")).size(), 8u);
  EXPECT_EQ(std::get<double>(slow->evidence.at("port_max_gts")), 16.0);
}

TEST(VirtAudit, CloudHypervisorCliqueIsRead) {
  auto v = detect_fixture("cloud-hypervisor");
  ASSERT_EQ(v.gpus.size(), 2u);
  for (const auto& g : v.gpus) {
    EXPECT_EQ(g.p2p_clique, report::P2pClique::present);
    EXPECT_EQ(g.p2p_clique_id, std::optional<int>(5));
    EXPECT_EQ(g.p2p_capability_offset, std::optional<int>(0xC8));
    EXPECT_EQ(g.attachment, report::Attachment::root_bus);
  }
  auto f = findings_for(v);
  EXPECT_EQ(finding(f, "virt.p2p_clique_missing"), nullptr);
  EXPECT_EQ(finding(f, "virt.p2p_cliques_split"), nullptr);
}

TEST(VirtAudit, BareMetalSwitchWithAcsRedirect) {
  auto v = detect_fixture("bare-metal-hgx");
  ASSERT_EQ(v.gpus.size(), 2u);
  const auto& g = gpu(v, "0000:18:00.0");
  EXPECT_EQ(g.attachment, report::Attachment::real_switch);
  EXPECT_EQ(g.link_synthetic, std::optional<bool>(false));
  EXPECT_EQ(g.iommu_group, std::optional<int>(40));
  EXPECT_TRUE(g.iommu_group_peers.empty());
  ASSERT_EQ(g.acs_above.size(), 3u);  // downstream, upstream, root port
  EXPECT_EQ(g.acs_above.front().acs_enabled, std::optional<std::string>("SV RR CR UF"));
  EXPECT_EQ(g.acs_above.front().p2p_redirect, std::optional<bool>(true));
  EXPECT_EQ(g.acs_above.back().acs_present, std::optional<bool>(false));
  EXPECT_EQ(v.host.intel_iommu, std::optional<std::string>("on"));
  EXPECT_EQ(v.host.passthrough_mode, std::optional<bool>(true));
  EXPECT_EQ(v.host.iommu_group_count, 2);
  auto f = findings_for(v);
  EXPECT_NE(finding(f, "virt.acs_redirects_p2p"), nullptr);
  EXPECT_EQ(finding(f, "virt.p2p_clique_missing"), nullptr);  // bare metal needs no clique
  EXPECT_EQ(finding(f, "virt.host_iommu_translated"), nullptr);  // iommu=pt
}

TEST(VirtAudit, AzureGpusOnTheirOwnDomainsUnprivilegedCapture) {
  auto v = detect_fixture("hyperv-azure");
  ASSERT_EQ(v.gpus.size(), 2u);
  for (const auto& g : v.gpus) {
    EXPECT_EQ(g.attachment, report::Attachment::hyperv_vpci);
    EXPECT_EQ(g.p2p_clique, report::P2pClique::unknown);
    EXPECT_EQ(g.p2p_clique_reason, "needs root");  // 64-byte config
    EXPECT_TRUE(g.numa_exposed);
  }
  EXPECT_FALSE(v.privileged);
  auto f = findings_for(v);
  EXPECT_NE(finding(f, "virt.p2p_clique_unchecked"), nullptr);
  EXPECT_EQ(finding(f, "virt.gpu_numa_hidden"), nullptr);
}

TEST(VirtAudit, HostSharingAnIommuGroupAndVfioWithoutIommu) {
  TempTree t("bare-metal-hgx");
  // Put an NVMe drive of another slot into GPU 0000:18:00.0's group 40.
  std::filesystem::create_directories(t.path() / "sys/devices/pci0000:15/0000:15:02.0");
  t.write("sys/devices/pci0000:15/0000:15:02.0/vendor", "0x144d\n");
  t.write("sys/devices/pci0000:15/0000:15:02.0/device", "0xa824\n");
  t.write("sys/devices/pci0000:15/0000:15:02.0/class", "0x010802\n");
  std::filesystem::create_symlink("../../../kernel/iommu_groups/40", t.path() / "sys/devices/pci0000:15/0000:15:02.0/iommu_group");
  std::filesystem::create_symlink("../../../devices/pci0000:15/0000:15:02.0", t.path() / "sys/bus/pci/devices/0000:15:02.0");
  auto v = detect_tree(t.path());
  ASSERT_EQ(gpu(v, "0000:18:00.0").iommu_group_peers.size(), 1u);
  EXPECT_NE(finding(findings_for(v), "virt.iommu_group_shared"), nullptr);

  // Bind the GPUs to vfio-pci with the IOMMU off: a fail.
  for (const char* dev : {"0000:17:00.0/0000:18:00.0", "0000:17:01.0/0000:19:00.0"}) {
    auto dir = t.path() / "sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0" / dev;
    std::filesystem::remove(dir / "driver");
    std::filesystem::create_symlink("../../../../../../bus/pci/drivers/vfio-pci", dir / "driver");
  }
  std::filesystem::remove_all(t.path() / "sys/kernel/iommu_groups");
  v = detect_tree(t.path());
  EXPECT_EQ(v.host.vfio_pci_gpus.size(), 2u);
  auto findings = findings_for(v);  // kept alive: `fail` points into it
  auto* fail = finding(findings, "virt.vfio_without_iommu");
  ASSERT_NE(fail, nullptr);
  EXPECT_EQ(fail->severity, report::Severity::fail);
}

TEST(VirtRules, I440fxWithGpusAndSplitCliques) {
  report::VirtSection v;
  v.hypervisor = "kvm";
  v.machine_type = "i440fx";
  for (int i = 0; i < 2; ++i) {
    report::GpuPassthrough g;
    g.bdf = "0000:00:0" + std::to_string(5 + i) + ".0";
    g.p2p_clique = report::P2pClique::present;
    g.p2p_clique_id = i;
    g.numa_exposed = true;
    v.gpus.push_back(g);
  }
  auto f = findings_for(v);
  ASSERT_NE(finding(f, "virt.i440fx_conventional_pci"), nullptr);
  EXPECT_EQ(finding(f, "virt.i440fx_conventional_pci")->title, "i440fx: GPUs on conventional PCI, use q35");
  EXPECT_NE(finding(f, "virt.p2p_cliques_split"), nullptr);
  EXPECT_EQ(finding(f, "virt.p2p_clique_missing"), nullptr);
}

// Root-only files made unreadable; as root, the check runs in a child that drops to nobody.
TEST(VirtUnprivileged, RootOnlySignalsReadUnknownNeedsRoot) {
  TempTree t("proxmox-kvm-q35");
  for (const char* f : {"sys/firmware/dmi/entries/0-0/raw", "sys/firmware/acpi/tables/FACP",
                        "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0/config",
                        "sys/devices/pci0000:00/0000:00:10.0/config", "sys/devices/pci0000:00/0000:00:1c.0/config"})
    t.chmod(f, 0400);
  auto check = [&]() -> int {
    auto v = detect_tree(t.path());
    int bad = 0;
    if (v.hypervisor != "kvm" || v.product != std::optional<std::string>("Proxmox VE")) bad |= 1;
    bool smbios = false, acpi = false;
    for (const auto& e : v.evidence) {
      if (e.source == "/sys/firmware/dmi/entries/0-0/raw") smbios = e.value == "unknown: needs root";
      if (e.source == "/sys/firmware/acpi/tables/FACP") acpi = e.value == "unknown: needs root";
    }
    if (!smbios || !acpi) bad |= 2;
    for (const auto& g : v.gpus)
      if (g.p2p_clique != report::P2pClique::unknown || g.p2p_clique_reason != "needs root") bad |= 4;
    if (v.privileged) bad |= 8;
    return bad;
  };
  if (::geteuid() != 0) {
    EXPECT_EQ(check(), 0);
    return;
  }
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) ::_exit(100);
    ::_exit(check());
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 100) GTEST_SKIP() << "cannot drop privileges here";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "bits: 1 verdict, 2 smbios/acpi, 4 clique, 8 privileged";
}

}  // namespace
}  // namespace interprobe
