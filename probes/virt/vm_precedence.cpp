// The VM verdict in systemd's precedence (src/basic/virt.c detect_vm, docs/reference.md §1),
// then its grade: which signal families agree, which contradict it.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "probes/virt/virt_signals.hpp"

namespace interprobe::virt {

namespace {

// These VMMs run on KVM (or Xen) yet have their own id: DMI decides before CPUID for them.
bool dmi_outranks_cpuid(const std::string& vm) {
  return vm == "oracle" || vm == "xen" || vm == "amazon" || vm == "parallels" || vm == "google";
}

// Pairs of ids that one machine legitimately shows in different families.
bool compatible_pair(const std::string& a, const std::string& b) {
  static const std::set<std::pair<std::string, std::string>> pairs = {
      {"kvm", "qemu"}, {"kvm", "amazon"}, {"kvm", "google"}, {"kvm", "oracle"}, {"xen", "amazon"},
      {"qemu", "bochs"}, {"kvm", "bochs"},
  };
  return pairs.count({a, b}) > 0 || pairs.count({b, a}) > 0;
}

const char* family_label(const std::string& family) {
  if (family == "cpuid") return "CPUID";
  if (family == "dmi") return "DMI";
  if (family == "smbios") return "SMBIOS";
  if (family == "acpi") return "ACPI";
  if (family == "pci") return "PCI ids";
  if (family == "xen") return "/proc/xen";
  if (family == "hypervisor_sysfs") return "/sys/hypervisor";
  if (family == "device_tree") return "device tree";
  if (family == "sysinfo") return "/proc/sysinfo";
  if (family == "cpuinfo") return "/proc/cpuinfo";
  return "a signal";
}

std::string explain_conflict(const Vote& v, const std::string& verdict, const CpuidSignals& cpuid,
                             const DmiSignals& dmi, const report::VirtSection& out) {
  if (v.family == "cpuid" && v.says == "none" && verdict != "none")
    return fmt::format("{} implies '{}' but the CPUID hypervisor bit is clear: full emulation (TCG) hiding the bit, "
                       "a hypervisor masking it, or spoofed firmware strings",
                       dmi.vm && *dmi.vm != "none" ? "DMI" : "other signals", verdict);
  if (verdict == "none")
    return fmt::format("{} implies '{}' but the verdict is none: spoofed or copied firmware strings, or a VMM that "
                       "hides the hypervisor bit",
                       family_label(v.family), v.says);
  if (v.family == "acpi" && out.product)
    return fmt::format("ACPI names {}, which runs on {}, but the CPUID signature is '{}' ({}): the VMM sets its own "
                       "signature; the verdict follows CPUID as systemd does",
                       *out.product, v.says,
                       cpuid.signature ? sanitize(cpuid.signature->substr(0, cpuid.signature->find_last_not_of('\0') + 1), 12)
                                       : "none",
                       verdict);
  return fmt::format("{} implies '{}' but the verdict is '{}'", family_label(v.family), v.says, verdict);
}

}  // namespace

std::string decide_hypervisor(const CpuidSignals& cpuid, const DmiSignals& dmi, const PlatformSignals& platform) {
  const std::string dmi_vm = dmi.vm.value_or("none");
  if (dmi_outranks_cpuid(dmi_vm)) return dmi_vm;  // 1
  if (platform.uml) return "uml";                // 2: a user process, possibly nested in another VM
  bool xen_dom0 = false;
  if (platform.proc_xen) {  // 3: domU now; dom0 waits for CPUID (it may be nested)
    if (!platform.xen_dom0.value_or(false)) return "xen";
    xen_dom0 = true;
  }
  bool hyperv = false, other = false;
  auto finish = [&](const std::string& v) {
    if (v != "none") return v;
    if (hyperv) return std::string("microsoft");
    if (other) return std::string("vm-other");
    return std::string("none");
  };
  const std::string cpu = cpuid.vm.value_or("none");  // 4
  if (cpu == "microsoft") hyperv = true;              // QEMU shows it too with enlightenments: decide last
  else if (cpu == "vm-other") other = true;
  else if (cpu != "none") return cpu;
  if (xen_dom0) return finish("none");
  if (dmi_vm == "vm-other") other = true;  // 5
  else if (dmi_vm != "none") return dmi_vm;
  if (platform.hypervisor_type_vm) {  // 6
    if (*platform.hypervisor_type_vm == "vm-other") other = true;
    else return *platform.hypervisor_type_vm;
  }
  if (platform.device_tree_vm) {  // 7
    if (*platform.device_tree_vm == "vm-other") other = true;
    else return *platform.device_tree_vm;
  }
  if (platform.sysinfo_vm) return *platform.sysinfo_vm;  // 8
  return finish("none");                                 // 9
}

bool vote_agrees(const std::string& vote, const std::string& verdict) {
  if (vote == verdict) return true;
  if (verdict == "none" || vote == "none") return false;
  if (vote == "vm" || verdict == "vm-other") return true;
  if (vote == "microsoft") return true;  // Hyper-V enlightenments are offered by many VMMs
  return compatible_pair(vote, verdict);
}

void grade_vm_verdict(const CpuidSignals& cpuid, const DmiSignals& dmi, const PciSignals& /*pci*/,
                      const EvidenceLog& log, report::VirtSection& out) {
  const std::string& verdict = out.hypervisor;
  std::set<std::string> agreeing;
  std::vector<const Vote*> contradicting;
  for (const auto& v : log.votes()) {
    if (vote_agrees(v.says, verdict)) {
      agreeing.insert(v.family);
    } else if (v.says == "none" && v.family != "cpuid") {
      // Missing VM strings or ids are weak: passthrough-only VMs and copied host DMI show none.
    } else if (v.says == "none" && verdict == "xen") {
      // Xen PV guests run without hardware virtualization: user-space CPUID shows the host CPU.
    } else {
      contradicting.push_back(&v);
    }
  }
  if (agreeing.size() >= 2 && contradicting.empty()) out.confidence = report::Confidence::high;
  else if (!agreeing.empty()) out.confidence = report::Confidence::medium;
  else out.confidence = report::Confidence::low;
  std::set<std::string> said;
  for (const Vote* v : contradicting) {
    std::string text = explain_conflict(*v, verdict, cpuid, dmi, out);
    if (said.insert(text).second) out.conflicts.push_back(text);
  }
}

}  // namespace interprobe::virt
