#pragma once
// Internal to probes/virt: the raw signals each reader gathers, the evidence log they write to,
// and the decision functions that turn signals into a verdict. Readers never decide; deciders
// never read files. That keeps systemd's precedence testable on plain structs.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/topology.hpp"
#include "model/virt.hpp"

namespace interprobe {

class HostRoot;
class CpuidSource;

namespace virt {

// What a strong signal says about the VM verdict: a hypervisor id, "vm" (some VM, unnamed) or
// "none". Heuristic signals carry no vote; they only add evidence.
struct Vote {
  std::string family;
  std::string says;
};

class EvidenceLog {
 public:
  void add(std::string source, std::string family, std::string value, std::string implies);
  void vote(std::string family, std::string says) { votes_.push_back({std::move(family), std::move(says)}); }
  void container_vote(std::string family, std::string says) {
    container_votes_.push_back({std::move(family), std::move(says)});
  }
  // Adds a "warning: ..." evidence line (malformed input); never throws.
  void warn(std::string source, std::string family, std::string value, std::string what);

  std::vector<report::VirtEvidence>& evidence() { return evidence_; }
  const std::vector<report::VirtEvidence>& evidence() const { return evidence_; }
  const std::vector<Vote>& votes() const { return votes_; }
  const std::vector<Vote>& container_votes() const { return container_votes_; }

 private:
  std::vector<report::VirtEvidence> evidence_;
  std::vector<Vote> votes_;
  std::vector<Vote> container_votes_;
};

inline constexpr const char* kNeedsRoot = "unknown: needs root";
inline constexpr const char* kNeedsRootReason = "needs root";  // p2p_clique_reason

// Machine strings are untrusted: printable ASCII only, at most `max_chars`, the rest escaped
// (interprobe::printable in ASCII mode).
std::string sanitize(std::string_view raw, std::size_t max_chars = 120);
// "unknown: needs root" for permission errors, otherwise the failure in words.
std::string describe_failure(int read_failure);

// --- signals ---------------------------------------------------------------------------------

struct CpuidSignals {
  bool known = false;                         // CPUID could be read at all
  std::optional<bool> hypervisor_bit;         // leaf 1 ECX bit 31
  std::optional<std::string> signature;       // 12 bytes at 0x40000000 (raw, may hold NULs)
  std::optional<std::string> vm;              // systemd's table: kvm, qemu, xen, ..., microsoft, vm-other
  std::optional<std::uint32_t> max_hypervisor_leaf;
  std::vector<std::string> other_signatures;  // "0x40000100 XenVMMXenVMM"
  std::optional<std::string> confidential;    // TDX (leaf 0x21), SEV-SNP/TDX (Hyper-V isolation)
};

struct DmiSignals {
  bool present = false;                       // /sys/class/dmi/id exists
  std::map<std::string, std::string> fields;  // file name -> sanitized value
  std::optional<std::string> vendor_vm;       // first prefix match over systemd's file order
  std::optional<std::string> vendor_vm_field; // the file that matched
  std::optional<bool> smbios_vm_bit;          // null: unknown (root-only or too short)
  std::optional<std::string> vm;              // after the Amazon and SMBIOS rules ("none" too)
  std::optional<std::string> acpi_oem_id;     // "FIRECK", "BOCHS " (root only)
  std::optional<std::string> acpi_oem_table_id;
  std::optional<std::string> fadt_hypervisor_vendor;  // "FIRECKVM" (ACPI 6 FADT, root only)
  bool root_only_unreadable = false;
};

struct PlatformSignals {
  bool uml = false;
  bool proc_xen = false;
  std::optional<bool> xen_dom0;               // null: not Xen, or could not tell
  std::optional<std::string> hypervisor_type; // /sys/hypervisor/type
  std::optional<std::string> hypervisor_type_vm;
  std::optional<std::string> device_tree_vm;
  std::optional<std::string> device_tree_compatible;
  std::optional<std::string> sysinfo_vm;      // /proc/sysinfo: zvm or kvm
  std::optional<std::string> cmdline;
  std::optional<std::string> osrelease;
  std::optional<std::string> confidential;    // from cpuinfo flags or guest device nodes
  std::optional<std::string> architecture;    // from cpuinfo: x86_64, aarch64, s390x, ppc64le
};

struct PciSignals {
  bool read = false;                          // /sys/bus/pci/devices was listable
  std::vector<report::PciDevice> devices;
  bool strong_virtual_ids = false;            // synthetic bridges/devices no bare metal has
  std::optional<std::string> specific_vm;     // 15ad vmware, 5853 xen, 1414 microsoft
  std::optional<std::string> machine_type;    // q35, i440fx, microvm, arm-virt
  bool firecracker_like = false;              // 8086:0d57 host bridge on a single root bus
  std::size_t root_buses = 0;
};

// --- readers (each adds its evidence and votes) ------------------------------------------------

CpuidSignals read_cpuid_signals(const CpuidSource& cpuid, EvidenceLog& log);
DmiSignals read_dmi_signals(const HostRoot& root, EvidenceLog& log);
PlatformSignals read_platform_signals(const HostRoot& root, const CpuidSignals& cpuid, EvidenceLog& log);
PciSignals read_pci_signals(const HostRoot& root, EvidenceLog& log);

// --- decisions ---------------------------------------------------------------------------------

// systemd's detect_vm order (docs/reference.md §1, precedence).
std::string decide_hypervisor(const CpuidSignals& cpuid, const DmiSignals& dmi, const PlatformSignals& platform);
// Beyond systemd: product, machine type (+version), Xen role; adds its evidence.
void describe_platform(const CpuidSignals& cpuid, const DmiSignals& dmi, const PlatformSignals& platform,
                       const PciSignals& pci, report::VirtSection& out, EvidenceLog& log);
// Confidence from the votes, conflicts between families.
void grade_vm_verdict(const CpuidSignals& cpuid, const DmiSignals& dmi, const PciSignals& pci,
                      const EvidenceLog& log, report::VirtSection& out);
// True when a vote is consistent with a verdict (kvm under a QEMU DMI, Hyper-V enlightenments...).
bool vote_agrees(const std::string& vote, const std::string& verdict);

// systemd's detect_container order plus virt-what's markers; sets container and its confidence.
void detect_container(const HostRoot& root, const PlatformSignals& platform, EvidenceLog& log,
                      report::VirtSection& out);
// Container manager name -> systemd id ("oci" handled by the caller).
std::string container_id_from_name(std::string_view name);

// --- GPU passthrough audit and host side ------------------------------------------------------

void audit_gpus(const HostRoot& root, const PciSignals& pci, report::VirtSection& out);
void read_host_iommu(const HostRoot& root, const PlatformSignals& platform, const PciSignals& pci,
                     report::VirtSection& out, EvidenceLog& log);
// Live root only: NVML's virtualization mode, memory and BAR1 size per GPU (when NVML loads).
void add_nvml_details(const HostRoot& root, report::VirtSection& out);

}  // namespace virt
}  // namespace interprobe
