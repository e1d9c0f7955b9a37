// systemd's precedence on plain signal structs, container markers on small trees, and malformed
// input that must become warnings.
#include <gtest/gtest.h>

#include <random>

#include "probes/virt/virt_signals.hpp"
#include "virt_test_support.hpp"

namespace interprobe {
namespace {

using testing_support::detect_tree;
using testing_support::TempTree;
using virt::CpuidSignals;
using virt::decide_hypervisor;
using virt::DmiSignals;
using virt::PlatformSignals;

CpuidSignals cpu(const char* vm) {
  CpuidSignals c;
  c.known = true;
  c.hypervisor_bit = vm != nullptr;
  if (vm) c.vm = vm;
  return c;
}

DmiSignals dmi(const char* vm) {
  DmiSignals d;
  d.present = true;
  d.vm = vm;
  return d;
}

TEST(VirtPrecedence, MicrosoftSignatureIsDecidedLast) {
  EXPECT_EQ(decide_hypervisor(cpu("microsoft"), dmi("qemu"), {}), "qemu");  // QEMU with enlightenments
  EXPECT_EQ(decide_hypervisor(cpu("microsoft"), dmi("none"), {}), "microsoft");
  PlatformSignals hv_sysfs;
  hv_sysfs.hypervisor_type_vm = "xen";
  EXPECT_EQ(decide_hypervisor(cpu("microsoft"), dmi("none"), hv_sysfs), "xen");  // Xen with viridian
}

TEST(VirtPrecedence, DmiOutranksCpuidOnlyForVmmsThatRunOnKvm) {
  EXPECT_EQ(decide_hypervisor(cpu("kvm"), dmi("oracle"), {}), "oracle");
  EXPECT_EQ(decide_hypervisor(cpu("kvm"), dmi("amazon"), {}), "amazon");
  EXPECT_EQ(decide_hypervisor(cpu("kvm"), dmi("google"), {}), "google");
  EXPECT_EQ(decide_hypervisor(cpu("kvm"), dmi("qemu"), {}), "kvm");       // DMI QEMU + CPUID KVM = kvm
  EXPECT_EQ(decide_hypervisor(cpu(nullptr), dmi("qemu"), {}), "qemu");    // without KVM CPUID = TCG
  EXPECT_EQ(decide_hypervisor(cpu("vm-other"), dmi("vmware"), {}), "vmware");
  EXPECT_EQ(decide_hypervisor(cpu("vm-other"), dmi("none"), {}), "vm-other");
}

TEST(VirtPrecedence, UmlAndXenComeBeforeCpuid) {
  PlatformSignals uml;
  uml.uml = true;
  EXPECT_EQ(decide_hypervisor(cpu("kvm"), dmi("none"), uml), "uml");
  PlatformSignals domu;
  domu.proc_xen = true;
  domu.xen_dom0 = false;
  EXPECT_EQ(decide_hypervisor(cpu(nullptr), dmi("none"), domu), "xen");
  PlatformSignals dom0 = domu;
  dom0.xen_dom0 = true;
  EXPECT_EQ(decide_hypervisor(cpu(nullptr), dmi("none"), dom0), "none");
  EXPECT_EQ(decide_hypervisor(cpu("kvm"), dmi("none"), dom0), "kvm");  // a dom0 nested in KVM
}

TEST(VirtPrecedence, LateSignalsAndFallbacks) {
  PlatformSignals other;
  other.hypervisor_type_vm = "vm-other";
  EXPECT_EQ(decide_hypervisor(cpu(nullptr), dmi("none"), other), "vm-other");
  PlatformSignals dt;
  dt.device_tree_vm = "kvm";
  EXPECT_EQ(decide_hypervisor(CpuidSignals{}, DmiSignals{}, dt), "kvm");
  PlatformSignals zvm;
  zvm.sysinfo_vm = "zvm";
  EXPECT_EQ(decide_hypervisor(CpuidSignals{}, DmiSignals{}, zvm), "zvm");
  EXPECT_EQ(decide_hypervisor(CpuidSignals{}, DmiSignals{}, {}), "none");
}

TEST(VirtPrecedence, VotesAgreeAcrossKnownPairs) {
  EXPECT_TRUE(virt::vote_agrees("qemu", "kvm"));
  EXPECT_TRUE(virt::vote_agrees("vm", "bhyve"));
  EXPECT_TRUE(virt::vote_agrees("microsoft", "kvm"));
  EXPECT_FALSE(virt::vote_agrees("vmware", "kvm"));
  EXPECT_FALSE(virt::vote_agrees("none", "kvm"));
  EXPECT_FALSE(virt::vote_agrees("vm", "none"));
}

TEST(VirtContainer, ManagerNamesMapToSystemdIds) {
  EXPECT_EQ(virt::container_id_from_name("systemd-nspawn"), "systemd-nspawn");
  EXPECT_EQ(virt::container_id_from_name("lxc-libvirt"), "lxc-libvirt");
  EXPECT_EQ(virt::container_id_from_name("garden"), "container-other");
}

TEST(VirtContainer, MarkersBeyondSystemd) {
  {
    TempTree t("");
    t.write("proc/self/status", "Name:\tx\nTracerPid:\t0\nVxID:\t42\n");
    EXPECT_EQ(detect_tree(t.path()).container, "container-other");  // Linux-VServer guest
    t.write("proc/self/status", "Name:\tx\nVxID:\t0\n");
    EXPECT_EQ(detect_tree(t.path()).container, "none");  // the VServer host
  }
  {
    TempTree t("");
    t.write(".dockerinit", "");
    EXPECT_EQ(detect_tree(t.path()).container, "docker");
  }
  {
    TempTree t("");
    t.write("proc/self/cgroup", "11:pids:/kubepods/burstable/pod1\n3:cpu:/libpod-abc.scope\n");
    EXPECT_EQ(detect_tree(t.path()).container, "container-other");  // first matching line wins
  }
}

TEST(VirtContainer, SystemdOrderAndOci) {
  {
    TempTree t("");
    t.write("run/host/container-manager", "oci\n");
    t.write(".dockerenv", "");
    auto v = detect_tree(t.path());
    EXPECT_EQ(v.container, "docker");  // "oci" defers to the files
    EXPECT_EQ(v.container_confidence, report::Confidence::high);
  }
  {
    TempTree t("");
    t.write("run/host/container-manager", "oci\n");
    EXPECT_EQ(detect_tree(t.path()).container, "container-other");
  }
  {
    TempTree t("");
    t.write("proc/vz/veinfo", "");
    t.write(".dockerenv", "");
    EXPECT_EQ(detect_tree(t.path()).container, "openvz");  // /proc/vz without /proc/bc comes first
    t.write("proc/bc/0", "");
    EXPECT_EQ(detect_tree(t.path()).container, "docker");  // an OpenVZ host
  }
  {
    TempTree t("");
    t.write("run/systemd/container", "systemd-nspawn\n");
    t.write("run/.containerenv", "");
    EXPECT_EQ(detect_tree(t.path()).container, "systemd-nspawn");
  }
}

TEST(VirtContainer, CgroupNamespaceHeuristicIsLowConfidence) {
  TempTree t("");
  std::filesystem::create_directories(t.path() / "proc/self/ns");
  std::filesystem::create_symlink("cgroup:[4026532401]", t.path() / "proc/self/ns/cgroup");
  t.write("sys/fs/cgroup/systemd/cgroup.procs", "");  // v1 systemd hierarchy without release_agent
  auto v = detect_tree(t.path());
  EXPECT_EQ(v.container, "container-other");
  EXPECT_EQ(v.container_confidence, report::Confidence::low);
  t.write("sys/fs/cgroup/systemd/release_agent", "");
  EXPECT_EQ(detect_tree(t.path()).container, "none");
}

int warnings(const report::VirtSection& v, const std::string& source_part) {
  int n = 0;
  for (const auto& e : v.evidence)
    if (e.implies.rfind("warning:", 0) == 0 && e.source.find(source_part) != std::string::npos) ++n;
  return n;
}

TEST(VirtMalformed, GarbageBecomesWarningsNotExceptions) {
  report::VirtSection v;
  ASSERT_NO_THROW(v = testing_support::detect_fixture("malformed"));
  EXPECT_GE(warnings(v, "cpuid"), 1) << testing_support::dump_evidence(v);  // cpuid.txt line 1
  EXPECT_GE(warnings(v, "/sys/class/dmi/id/sys_vendor"), 1);                // non-printable bytes
  EXPECT_GE(warnings(v, "/sys/class/dmi/id/product_name"), 1);              // a directory
  EXPECT_GE(warnings(v, "/sys/class/dmi/id/bios_vendor"), 1);               // two lines
  EXPECT_GE(warnings(v, "/sys/class/dmi/id/product_version"), 1);           // 5000 bytes
  EXPECT_GE(warnings(v, "/proc/cpuinfo"), 1);
  EXPECT_GE(warnings(v, "/sys/firmware/acpi/tables/FACP"), 1);
  EXPECT_GE(warnings(v, "/sys/hypervisor/properties/features"), 1);
  // The escaped DMI string does not pass for "QEMU".
  EXPECT_EQ(v.hypervisor, "xen");  // /proc/xen still says some Xen domain
  for (const auto& e : v.evidence)
    for (unsigned char c : e.value) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << e.source;
}

TEST(VirtMalformed, RandomBytesInEveryFileNeverThrow) {
  std::mt19937 rng(1234);
  const char* files[] = {"sys/class/dmi/id/sys_vendor", "sys/class/dmi/id/product_name", "proc/cpuinfo",
                         "proc/xen/capabilities", "sys/hypervisor/type", "proc/1/environ", "proc/self/cgroup",
                         "proc/self/status", "run/host/container-manager", "sys/firmware/dmi/entries/0-0/raw",
                         "sys/firmware/acpi/tables/FACP", "proc/cmdline", "proc/device-tree/hypervisor/compatible",
                         "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0/config",
                         "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0/resource",
                         "sys/devices/pci0000:00/0000:00:1c.0/config", "proc/sysinfo"};
  for (int round = 0; round < 20; ++round) {
    TempTree t("proxmox-kvm-q35");
    for (const char* f : files) {
      std::string junk(rng() % 600, '\0');
      for (auto& c : junk) c = static_cast<char>(rng() & 0xff);
      t.write(f, junk);
    }
    EXPECT_NO_THROW(detect_tree(t.path())) << "round " << round;
  }
}

}  // namespace
}  // namespace interprobe
