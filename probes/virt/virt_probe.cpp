#include "probes/virt/virt_probe.hpp"

#include "common/host_root.hpp"
#include "probes/virt/virt_signals.hpp"

namespace interprobe {

namespace {

bool needs_root(const std::string& s) { return s == virt::kNeedsRoot; }

// Root-only signals: SMBIOS type 0, ACPI headers, PID 1's environment, config space past 64 bytes.
bool all_privileged_reads_worked(const report::VirtSection& s) {
  for (const auto& e : s.evidence)
    if (needs_root(e.value)) return false;
  for (const auto& g : s.gpus) {
    if (g.p2p_clique_reason == std::optional<std::string>(virt::kNeedsRootReason)) return false;
    for (const auto& a : g.acs_above)
      if (a.unknown_reason && needs_root(*a.unknown_reason)) return false;
  }
  return true;
}

class VirtProbe final : public Probe {
 public:
  std::string name() const override { return "virtualization"; }
  void run(const ProbeContext& ctx, report::Report& report) override {
    report.virtualization = detect_virtualization(ctx.root, ctx.cpuid);
  }
};

}  // namespace

report::VirtSection detect_virtualization(const HostRoot& root, const CpuidSource& cpuid) {
  using namespace virt;
  report::VirtSection out;
  EvidenceLog log;
  CpuidSignals cpu = read_cpuid_signals(cpuid, log);
  DmiSignals dmi = read_dmi_signals(root, log);
  PlatformSignals platform = read_platform_signals(root, cpu, log);
  PciSignals pci = read_pci_signals(root, log);

  out.hypervisor = decide_hypervisor(cpu, dmi, platform);
  detect_container(root, platform, log, out);
  describe_platform(cpu, dmi, platform, pci, out, log);
  grade_vm_verdict(cpu, dmi, pci, log, out);
  read_host_iommu(root, platform, pci, out, log);
  audit_gpus(root, pci, out);
  add_nvml_details(root, out);
  out.evidence = std::move(log.evidence());
  out.privileged = all_privileged_reads_worked(out);
  return out;
}

std::unique_ptr<Probe> make_virt_probe() { return std::make_unique<VirtProbe>(); }

}  // namespace interprobe
