// Platform files: /proc/cpuinfo (UML, flags, confidential guests), Xen (/proc/xen and dom0),
// /sys/hypervisor/type, the device tree, /proc/sysinfo (z/VM) and the kernel command line.
#include <set>

#include <fmt/format.h>

#include "common/host_root.hpp"
#include "common/text.hpp"
#include "probes/virt/virt_signals.hpp"

namespace interprobe::virt {

namespace {

constexpr unsigned kXenFeatureDom0 = 11;  // XENFEAT_dom0, xen/include/public/features.h

bool looks_binary(std::string_view text) {
  for (unsigned char c : text)
    if (c == 0 || (c < 0x20 && c != '\n' && c != '\t' && c != '\r')) return true;
  return false;
}

// The first NUL- or newline-terminated string of a file (device tree properties end in NUL).
std::optional<std::string> first_string(const HostRoot& root, std::string_view path) {
  FileRead r = root.read(path, 4096);
  if (!r.ok()) return std::nullopt;
  std::string_view text = *r.content;
  text = text.substr(0, std::min(text.find('\0'), text.find('\n')));
  return sanitize(trim(text), 120);
}

void read_cpuinfo(const HostRoot& root, const CpuidSignals& cpuid, PlatformSignals& s, EvidenceLog& log) {
  FileRead r = root.read("/proc/cpuinfo");
  if (!r.ok()) {
    if (r.failure != ReadFailure::missing)
      log.warn("/proc/cpuinfo", "cpuinfo", describe_failure(static_cast<int>(r.failure)), "UML and CPU flags not checked");
    return;
  }
  const std::string& text = *r.content;
  if (looks_binary(text) || text.find(':') == std::string::npos) {
    log.warn("/proc/cpuinfo", "cpuinfo", fmt::format("{} bytes, not 'key : value' text", text.size()),
             "malformed cpuinfo; UML and CPU flags not checked");
    return;
  }
  auto vendor = find_field(text, "vendor_id", ':');
  if (vendor && vendor->rfind("User Mode Linux", 0) == 0) {
    s.uml = true;
    log.add("/proc/cpuinfo vendor_id", "cpuinfo", "'" + sanitize(*vendor) + "'", "uml: User Mode Linux");
    log.vote("cpuinfo", "uml");
  }
  if (vendor && vendor->rfind("IBM/S390", 0) == 0) s.architecture = "s390x";
  else if (vendor) s.architecture = "x86_64";
  else if (find_field(text, "CPU implementer", ':')) s.architecture = "aarch64";
  else if (auto cpu = find_field(text, "cpu", ':'); cpu && cpu->rfind("POWER", 0) == 0) s.architecture = "ppc64le";

  auto flags_line = find_field(text, "flags", ':');
  if (!flags_line) return;
  std::set<std::string> flags;
  for (auto& f : split_whitespace(*flags_line)) flags.insert(f);
  bool hypervisor_flag = flags.count("hypervisor") > 0;
  if (!cpuid.known) {
    // Without CPUID (a tree with no cpuid.txt) the kernel's copy of the bit stands in for it.
    log.add("/proc/cpuinfo flags", "cpuinfo", hypervisor_flag ? "'hypervisor' present" : "'hypervisor' absent",
            hypervisor_flag ? "vm: the kernel saw the CPUID hypervisor bit" : "none: the kernel saw no hypervisor bit");
    log.vote("cpuinfo", hypervisor_flag ? "vm" : "none");
  }
  // Hosts list sev/sev_es/sev_snp as capabilities; only inside a guest do they mean "active".
  bool guest = hypervisor_flag || cpuid.hypervisor_bit.value_or(false);
  const char* confidential = nullptr;
  if (flags.count("tdx_guest")) confidential = "TDX";
  else if (guest && flags.count("sev_snp")) confidential = "SEV-SNP";
  else if (guest && flags.count("sev_es")) confidential = "SEV-ES";
  else if (guest && flags.count("sev")) confidential = "SEV";
  if (confidential) {
    s.confidential = confidential;
    log.add("/proc/cpuinfo flags", "confidential", std::string("'") + confidential + "' flags in a guest",
            std::string("confidential ") + confidential + " guest");
  }
}

void read_xen(const HostRoot& root, PlatformSignals& s, EvidenceLog& log) {
  s.proc_xen = root.exists("/proc/xen");
  if (!s.proc_xen) return;
  log.add("/proc/xen", "xen", "present", "xen: some Xen domain (dom0 is a host, domU a guest)");
  if (auto features = root.read_text("/sys/hypervisor/properties/features")) {
    if (auto bits = parse_hex(*features)) {
      s.xen_dom0 = ((*bits >> kXenFeatureDom0) & 1u) != 0;
      log.add("/sys/hypervisor/properties/features", "xen", sanitize(*features, 20),
              *s.xen_dom0 ? "dom0: XENFEAT_dom0 set (the hardware domain)" : "domU: XENFEAT_dom0 clear");
      return;
    }
    log.warn("/sys/hypervisor/properties/features", "xen", sanitize(*features, 40), "not hex; dom0 decided from capabilities");
  }
  FileRead caps = root.read("/proc/xen/capabilities", 4096);
  if (caps.failure == ReadFailure::missing) {
    s.xen_dom0 = false;
    log.add("/proc/xen/capabilities", "xen", "absent", "domU");
    return;
  }
  if (!caps.ok()) {
    log.add("/proc/xen/capabilities", "xen", describe_failure(static_cast<int>(caps.failure)), "dom0 or domU unknown");
    return;
  }
  std::string text(trim(*caps.content));
  bool control = false;
  for (auto& cap : split(text, ','))
    if (trim(cap) == "control_d") control = true;
  s.xen_dom0 = control;
  log.add("/proc/xen/capabilities", "xen", "'" + sanitize(text, 60) + "'",
          control ? "dom0: control_d (not a VM for systemd; a Xen host)" : "domU");
}

void read_hypervisor_sysfs(const HostRoot& root, PlatformSignals& s, EvidenceLog& log) {
  auto type = first_string(root, "/sys/hypervisor/type");
  if (!type) return;
  s.hypervisor_type = *type;
  s.hypervisor_type_vm = *type == "xen" ? "xen" : "vm-other";
  log.add("/sys/hypervisor/type", "hypervisor_sysfs", "'" + *type + "'", *s.hypervisor_type_vm);
  // dom0 is the Xen host: the file names its hypervisor, not a VM around it.
  if (!s.xen_dom0.value_or(false))
    log.vote("hypervisor_sysfs", *s.hypervisor_type_vm == "vm-other" ? "vm" : *s.hypervisor_type_vm);
}

void read_device_tree(const HostRoot& root, PlatformSignals& s, EvidenceLog& log) {
  if (!root.is_directory("/proc/device-tree")) return;
  if (auto hv = first_string(root, "/proc/device-tree/hypervisor/compatible")) {
    std::string vm = *hv == "linux,kvm" ? "kvm"
                     : hv->find("xen") != std::string::npos    ? "xen"
                     : hv->find("vmware") != std::string::npos ? "vmware"
                                                               : "vm-other";
    s.device_tree_vm = vm;
    log.add("/proc/device-tree/hypervisor/compatible", "device_tree", "'" + *hv + "'", vm);
  } else if (root.exists("/proc/device-tree/ibm,partition-name") && root.exists("/proc/device-tree/hmc-managed?") &&
             !root.exists("/proc/device-tree/chosen/qemu,graphic-width")) {
    s.device_tree_vm = "powervm";
    log.add("/proc/device-tree/ibm,partition-name", "device_tree", "present, HMC managed", "powervm: an LPAR");
  } else {
    for (const auto& entry : root.list("/proc/device-tree")) {
      if (entry.find("fw-cfg") != std::string::npos) {
        s.device_tree_vm = "qemu";
        log.add("/proc/device-tree/" + sanitize(entry, 60), "device_tree", "present", "qemu: QEMU fw-cfg device");
        break;
      }
    }
    s.device_tree_compatible = first_string(root, "/proc/device-tree/compatible");
    if (!s.device_tree_vm && s.device_tree_compatible == "qemu,pseries") {
      s.device_tree_vm = "qemu";
      log.add("/proc/device-tree/compatible", "device_tree", "'qemu,pseries'", "qemu");
    }
  }
  if (!s.device_tree_compatible) s.device_tree_compatible = first_string(root, "/proc/device-tree/compatible");
  if (s.device_tree_vm) log.vote("device_tree", *s.device_tree_vm == "vm-other" ? "vm" : *s.device_tree_vm);
}

void read_sysinfo(const HostRoot& root, PlatformSignals& s, EvidenceLog& log) {
  FileRead r = root.read("/proc/sysinfo", 256 * 1024);
  if (!r.ok()) return;
  auto program = find_field(*r.content, "VM00 Control Program", ':');
  if (!program) return;
  auto words = split_whitespace(*program);
  std::string first = words.empty() ? "" : words.front();
  s.sysinfo_vm = first == "z/VM" ? "zvm" : "kvm";
  log.add("/proc/sysinfo VM00 Control Program", "sysinfo", "'" + sanitize(*program, 60) + "'", *s.sysinfo_vm);
  log.vote("sysinfo", *s.sysinfo_vm);
}

void read_cmdline(const HostRoot& root, PlatformSignals& s, EvidenceLog& log) {
  s.cmdline = root.read_text("/proc/cmdline");
  if (!s.cmdline) return;
  // Heuristics only: init arguments and clock choices are set by whoever built the image.
  for (const auto& token : split_whitespace(*s.cmdline)) {
    std::string lower = to_lower(token);
    if (lower.find("firecracker") != std::string::npos)
      log.add("/proc/cmdline", "cmdline", "'" + sanitize(token, 60) + "'", "hint: product Firecracker (init argument)");
    else if (lower == "clocksource=kvm-clock")
      log.add("/proc/cmdline", "cmdline", "'" + sanitize(token, 60) + "'", "hint: a KVM-based VMM (kvm-clock)");
  }
}

void read_confidential_devices(const HostRoot& root, PlatformSignals& s, EvidenceLog& log) {
  if (root.exists("/dev/sev-guest")) {
    if (!s.confidential || *s.confidential != "SEV-SNP") s.confidential = "SEV-SNP";
    log.add("/dev/sev-guest", "confidential", "present", "confidential SEV-SNP guest (guest attestation device)");
  }
  if (root.exists("/dev/tdx_guest")) {
    s.confidential = "TDX";
    log.add("/dev/tdx_guest", "confidential", "present", "confidential TDX guest (guest attestation device)");
  }
}

}  // namespace

PlatformSignals read_platform_signals(const HostRoot& root, const CpuidSignals& cpuid, EvidenceLog& log) {
  PlatformSignals s;
  read_cpuinfo(root, cpuid, s, log);
  read_xen(root, s, log);
  if (s.proc_xen && !s.xen_dom0.value_or(false)) log.vote("xen", "xen");
  read_hypervisor_sysfs(root, s, log);
  read_device_tree(root, s, log);
  read_sysinfo(root, s, log);
  read_cmdline(root, s, log);
  read_confidential_devices(root, s, log);
  s.osrelease = root.read_text("/proc/sys/kernel/osrelease");
  if (!s.confidential && cpuid.confidential) s.confidential = cpuid.confidential;
  return s;
}

}  // namespace interprobe::virt
