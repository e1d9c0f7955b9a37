// Beyond systemd: which product the VM runs on (Firecracker, Proxmox VE, AWS EC2 (Nitro) ...),
// the QEMU machine type with its version, the Xen role and a confidential-computing guest.
// Each conclusion is written to the evidence with the signals it rests on.
#include <cctype>

#include <fmt/format.h>

#include "probes/virt/virt_signals.hpp"

namespace interprobe::virt {

namespace {

constexpr const char* kAzureAssetTag = "7783-7084-3265-9085-8269-3286-77";

struct Pick {
  std::string product;
  std::string because;
};

std::string field(const DmiSignals& dmi, const char* name) {
  auto it = dmi.fields.find(name);
  return it == dmi.fields.end() ? std::string() : it->second;
}

bool starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::optional<Pick> pick_product(const CpuidSignals& cpuid, const DmiSignals& dmi, const PlatformSignals& platform,
                                 const PciSignals& pci, const report::VirtSection& out) {
  const std::string vendor = field(dmi, "sys_vendor"), product = field(dmi, "product_name");
  const std::string bios_vendor = field(dmi, "bios_vendor"), bios_version = field(dmi, "bios_version");
  const std::string oem = dmi.acpi_oem_id.value_or("");
  const std::string& hv = out.hypervisor;
  std::string pci_note = pci.firecracker_like ? ", single PCI bus behind host bridge 8086:0d57" : "";
  std::string dmi_note = dmi.present ? "" : ", no DMI/SMBIOS";

  if (oem == "FIRECK" || dmi.fadt_hypervisor_vendor == "FIRECKVM")
    return Pick{"Firecracker", "ACPI OEM id FIRECK" + dmi_note + pci_note};
  if (starts(vendor, "Cloud Hypervisor") || product == "cloud-hypervisor" || oem == "CLOUDH")
    return Pick{"Cloud Hypervisor", starts(vendor, "Cloud Hypervisor") ? "DMI sys_vendor 'Cloud Hypervisor'" : "ACPI OEM id CLOUDH"};
  if (!dmi.present && pci.firecracker_like && hv != "none")
    return Pick{"Firecracker", "no DMI/SMBIOS" + pci_note +
                                   " (Cloud Hypervisor and Dragonball share the bridge id but Cloud Hypervisor has DMI)"};
  if (starts(vendor, "Amazon EC2") || starts(bios_vendor, "Amazon EC2")) {
    if (hv == "none") return Pick{"AWS EC2 bare metal", "DMI 'Amazon EC2' with no VM (SMBIOS bit or '.metal' product)"};
    return Pick{"AWS EC2 (Nitro)", "DMI 'Amazon EC2' in a VM"};
  }
  if (hv == "xen" && (bios_version.find("amazon") != std::string::npos || oem == "AMAZON"))
    return Pick{"AWS EC2 (Xen)", "Xen with BIOS version '" + bios_version + "'"};
  if (product == "Google Compute Engine" || starts(vendor, "Google"))
    return Pick{"Google Compute Engine", "DMI product '" + product + "'"};
  if (field(dmi, "chassis_asset_tag") == kAzureAssetTag)
    return Pick{"Azure", "DMI chassis_asset_tag is Azure's"};
  if (hv == "microsoft" && out.container == "wsl") return Pick{"WSL 2", "Hyper-V CPUID with a WSL kernel"};
  if ((starts(vendor, "Microsoft Corporation") && product == "Virtual Machine") || hv == "microsoft")
    return Pick{"Hyper-V", starts(vendor, "Microsoft") ? "DMI 'Microsoft Corporation' 'Virtual Machine'" : "CPUID 'Microsoft Hv'"};
  if (starts(bios_vendor, "Proxmox")) return Pick{"Proxmox VE", "DMI bios_vendor '" + bios_vendor + "'"};
  if (starts(product, "OpenStack") || starts(vendor, "OpenStack")) return Pick{"OpenStack", "DMI names OpenStack"};
  if (starts(product, "KubeVirt") || starts(vendor, "KubeVirt")) return Pick{"KubeVirt", "DMI names KubeVirt"};
  const std::string dmi_vm = dmi.vendor_vm.value_or("");
  if (dmi_vm == "vmware" || hv == "vmware") return Pick{"VMware", "VMware DMI or CPUID"};
  if (dmi_vm == "oracle" || hv == "oracle") return Pick{"VirtualBox", "DMI names VirtualBox/innotek/Oracle"};
  if (dmi_vm == "parallels" || hv == "parallels") return Pick{"Parallels", "DMI names Parallels"};
  if (dmi_vm == "apple" || hv == "apple") return Pick{"Apple Virtualization", "Apple Virtualization signature"};
  if (dmi_vm == "bochs") return Pick{"Bochs", "DMI names Bochs"};
  // Xen HVM's device model is QEMU (i440fx ids): Xen decides before QEMU hardware does.
  if (hv == "xen" || platform.xen_dom0.value_or(false)) return Pick{"Xen", "Xen signals"};
  if (starts(vendor, "QEMU") || oem == "BOCHS " || pci.machine_type == std::optional<std::string>("q35") ||
      pci.machine_type == std::optional<std::string>("i440fx"))
    return Pick{"QEMU", starts(vendor, "QEMU") ? "DMI sys_vendor 'QEMU'" : "QEMU machine hardware (ACPI or PCI ids)"};
  static const std::pair<const char*, const char*> kNames[] = {
      {"kvm", "KVM"}, {"qemu", "QEMU"}, {"uml", "User Mode Linux"}, {"zvm", "z/VM"}, {"powervm", "PowerVM"},
      {"bhyve", "bhyve"}, {"acrn", "ACRN"}, {"qnx", "QNX Hypervisor"}, {"sre", "Lockheed Martin SRE"},
      {"google", "Google Compute Engine"}, {"amazon", "AWS EC2 (Nitro)"}, {"microsoft", "Hyper-V"}};
  for (const auto& [id, name] : kNames)
    if (hv == id) return Pick{name, "the hypervisor id alone"};
  (void)cpuid;
  return std::nullopt;
}

// "pc-q35-8.1", "pc-i440fx-7.2+pve0", "virt-8.2": QEMU's machine names in DMI product_version.
bool is_machine_version(const std::string& v) {
  if (!(starts(v, "pc-q35-") || starts(v, "pc-i440fx-") || starts(v, "virt-") || starts(v, "pc-"))) return false;
  for (char c : v)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '+' || c == '_')) return false;
  return v.size() <= 40;
}

void pick_machine_type(const DmiSignals& dmi, const PlatformSignals& platform, const PciSignals& pci,
                       report::VirtSection& out, EvidenceLog& log) {
  if (out.hypervisor == "none" && !platform.xen_dom0.value_or(false)) return;  // real chipsets are no machine types
  std::string because;
  const std::string product = field(dmi, "product_name"), version = field(dmi, "product_version");
  if (pci.machine_type && (*pci.machine_type != "arm-virt" || platform.architecture != "x86_64")) {
    out.machine_type = *pci.machine_type;
    because = "PCI host bridge ids";
  } else if (product.find("Q35") != std::string::npos && starts(product, "Standard PC")) {
    out.machine_type = "q35";
    because = "DMI product '" + product + "'";
  } else if (product.find("i440FX") != std::string::npos && starts(product, "Standard PC")) {
    out.machine_type = "i440fx";
    because = "DMI product '" + product + "'";
  } else if (out.product == std::optional<std::string>("Firecracker") ||
             out.product == std::optional<std::string>("Cloud Hypervisor")) {
    out.machine_type = "microvm";
    because = "a microVM monitor";
  } else if (platform.device_tree_compatible == std::optional<std::string>("linux,dummy-virt")) {
    out.machine_type = "arm-virt";
    because = "device tree 'linux,dummy-virt'";
  }
  if (is_machine_version(version)) {
    out.machine_version = version;
    if (!out.machine_type) {
      if (version.find("q35") != std::string::npos) out.machine_type = "q35";
      else if (version.find("i440fx") != std::string::npos) out.machine_type = "i440fx";
      else if (starts(version, "virt-")) out.machine_type = "arm-virt";
      because = "DMI product_version";
    } else {
      because += ", version from DMI product_version";
    }
  }
  if (out.machine_type)
    log.add("machine type", "derived", *out.machine_type + (out.machine_version ? " (" + *out.machine_version + ")" : ""),
            "from " + because);
}

}  // namespace

void describe_platform(const CpuidSignals& cpuid, const DmiSignals& dmi, const PlatformSignals& platform,
                       const PciSignals& pci, report::VirtSection& out, EvidenceLog& log) {
  if (auto pick = pick_product(cpuid, dmi, platform, pci, out)) {
    out.product = pick->product;
    std::string note = pick->because;
    if (pick->product == "Firecracker" && out.hypervisor != "kvm" && out.hypervisor != "none")
      note += fmt::format("; the verdict stays '{}' because CPUID decides for systemd", out.hypervisor);
    log.add("product", "derived", pick->product, "from " + note);
  }
  pick_machine_type(dmi, platform, pci, out, log);
  if (platform.xen_dom0.value_or(false)) out.xen_role = "dom0";
  else if (platform.proc_xen || out.hypervisor == "xen") out.xen_role = "domU";
  if (platform.confidential) out.confidential = platform.confidential;
  else if (cpuid.confidential) out.confidential = cpuid.confidential;
}

}  // namespace interprobe::virt
