// PCI ids that reveal virtual hardware (docs/reference.md §2), read from the shared PCI
// inventory of probes/topology: synthetic host bridges, QEMU's Red Hat ids, virtio, vendor ids
// of VMware, Hyper-V, Xen. Also the machine type the host bridge implies.
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/host_root.hpp"
#include "probes/topology/pci_inventory.hpp"
#include "probes/virt/virt_signals.hpp"

namespace interprobe::virt {

namespace {

enum class Strength { proof, hint };

struct KnownId {
  const char* vendor;
  const char* device;  // nullptr: any device of the vendor
  const char* meaning;
  Strength strength;
  const char* specific_vm;   // hypervisor it names, or nullptr
  const char* machine_type;  // machine type it implies, or nullptr
};

constexpr KnownId kKnownIds[] = {
    {"8086", "0d57", "synthetic host bridge of Firecracker / Cloud Hypervisor / Dragonball", Strength::proof, nullptr, "microvm"},
    {"8086", "1237", "i440FX host bridge (conventional PCI machine type)", Strength::proof, nullptr, "i440fx"},
    {"8086", "7000", "PIIX3 ISA bridge (i440fx)", Strength::proof, nullptr, "i440fx"},
    {"8086", "7010", "PIIX3 IDE (i440fx)", Strength::proof, nullptr, "i440fx"},
    {"8086", "7113", "PIIX4 ACPI (i440fx)", Strength::proof, nullptr, "i440fx"},
    {"8086", "29c0", "Q35 host bridge (PCIe machine type)", Strength::proof, nullptr, "q35"},
    {"8086", "2918", "ICH9 LPC (q35)", Strength::proof, nullptr, "q35"},
    {"8086", "2922", "ICH9 AHCI (q35)", Strength::proof, nullptr, "q35"},
    {"8086", "2930", "ICH9 SMBus (q35)", Strength::proof, nullptr, "q35"},
    {"1b36", "0008", "QEMU PCIe host bridge (arm/riscv virt machine)", Strength::proof, nullptr, "arm-virt"},
    {"1b36", "0009", "QEMU PCI expander bridge (pxb)", Strength::proof, nullptr, nullptr},
    {"1b36", "000b", "QEMU PCIe expander bridge (pxb-pcie: NUMA for devices)", Strength::proof, nullptr, nullptr},
    {"1b36", "000c", "QEMU PCIe root port", Strength::proof, nullptr, nullptr},
    {"1b36", nullptr, "QEMU (Red Hat) emulated device", Strength::proof, nullptr, nullptr},
    {"1234", "1111", "QEMU/Bochs VGA", Strength::proof, nullptr, nullptr},
    {"1af4", nullptr, "virtio device (a VM, or a DPU emulating virtio on bare metal)", Strength::hint, nullptr, nullptr},
    {"5853", nullptr, "Xen platform device", Strength::proof, "xen", nullptr},
    {"15ad", nullptr, "VMware virtual device", Strength::proof, "vmware", nullptr},
    {"1414", nullptr, "Microsoft Hyper-V virtual device", Strength::proof, "microsoft", nullptr},
    {"80ee", nullptr, "VirtualBox virtual device", Strength::proof, "oracle", nullptr},
    {"1ab8", nullptr, "Parallels virtual device", Strength::proof, "parallels", nullptr},
    {"1ae0", nullptr, "Google device (gVNIC): Google Compute Engine", Strength::hint, nullptr, nullptr},
    {"1d0f", nullptr, "Amazon device (ENA/EBS/EFA): AWS, also on .metal, not proof of a VM", Strength::hint, nullptr, nullptr},
    {"10de", "1af1", "NVSwitch (A100 HGX): real hardware, also passed into HGX VMs", Strength::hint, nullptr, nullptr},
    {"10de", "22a3", "NVSwitch (H100 HGX): real hardware, also passed into HGX VMs", Strength::hint, nullptr, nullptr},
};

const KnownId* lookup(const report::PciDevice& d) {
  for (const auto& k : kKnownIds)
    if (d.vendor_id == k.vendor && (!k.device || d.device_id == k.device)) return &k;
  return nullptr;
}

struct Seen {
  const KnownId* id = nullptr;
  std::string first_bdf;
  int count = 0;
};

}  // namespace

PciSignals read_pci_signals(const HostRoot& root, EvidenceLog& log) {
  PciSignals s;
  std::vector<std::string> warnings;
  s.read = root.is_directory("/sys/bus/pci/devices");
  if (!s.read) {
    log.add("/sys/bus/pci/devices", "pci", "absent", "nothing: no PCI bus (virtio-mmio microVM, container without /sys)");
    return s;
  }
  s.devices = read_pci_inventory(root, &warnings);
  int shown = 0;
  for (const auto& w : warnings) {
    if (w.rfind("PCI names:", 0) == 0) continue;  // names are cosmetic here
    if (++shown > 3) break;
    log.warn("pci inventory", "pci", sanitize(w, 160), "attribute ignored");
  }

  std::set<std::string> root_buses;
  std::map<std::string, Seen> seen;  // key: "vvvv:dddd" or "vvvv:*"
  bool host_bridge_0d57 = false, any_bridge = false;
  for (const auto& d : s.devices) {
    if (d.root_bus) root_buses.insert(*d.root_bus);
    if (d.class_id.value_or("").starts_with("0604")) any_bridge = true;
    const KnownId* k = lookup(d);
    if (!k) continue;
    std::string key = fmt::format("{}:{}", k->vendor, k->device ? k->device : "*");
    Seen& entry = seen[key];
    if (entry.count++ == 0) {
      entry.id = k;
      entry.first_bdf = d.bdf;
    }
    if (k->strength == Strength::proof) s.strong_virtual_ids = true;
    if (k->specific_vm && !s.specific_vm) s.specific_vm = k->specific_vm;
    if (k->machine_type && !s.machine_type) s.machine_type = k->machine_type;
    if (d.vendor_id == "8086" && d.device_id == "0d57") host_bridge_0d57 = true;
  }
  s.root_buses = root_buses.size();
  s.firecracker_like = host_bridge_0d57 && s.root_buses == 1 && !any_bridge;

  for (const auto& [key, entry] : seen) {
    std::string value = entry.count == 1 ? fmt::format("{} at {}", key, entry.first_bdf)
                                         : fmt::format("{} x{} (first {})", key, entry.count, entry.first_bdf);
    std::string implies = entry.id->strength == Strength::proof ? "vm: " : "hint: ";
    implies += entry.id->meaning;
    log.add(fmt::format("pci {}", key), "pci", value, implies);
  }
  if (s.firecracker_like)
    log.add("pci topology", "pci", fmt::format("{} devices on one root bus, no bridges", s.devices.size()),
            "microvm: single PCI bus behind the synthetic 8086:0d57 host bridge");

  if (s.specific_vm) log.vote("pci", *s.specific_vm);
  else if (s.strong_virtual_ids) log.vote("pci", "vm");
  else if (!s.devices.empty() && seen.count("1af4:*") == 0) log.vote("pci", "none");
  return s;
}

}  // namespace interprobe::virt
