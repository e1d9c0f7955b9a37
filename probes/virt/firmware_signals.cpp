// Firmware tables: DMI strings (/sys/class/dmi/id), the SMBIOS "virtual machine" bit and the
// ACPI table headers. The last two are root-only; unprivileged they read "unknown: needs root".
#include <array>

#include <fmt/format.h>

#include "common/host_root.hpp"
#include "common/text.hpp"
#include "probes/virt/virt_signals.hpp"

namespace interprobe::virt {

namespace {

constexpr const char* kDmiDir = "/sys/class/dmi/id";
constexpr std::size_t kDmiMaxBytes = 4096;
constexpr std::size_t kAcpiMaxBytes = 64 * 1024;

// systemd's order: product_name first so "KVM" wins over sys_vendor "QEMU".
constexpr std::array<const char*, 5> kVendorFiles{"product_name", "sys_vendor", "board_vendor", "bios_vendor",
                                                  "product_version"};
// Read for product and machine type only.
constexpr std::array<const char*, 6> kExtraFiles{"chassis_asset_tag", "chassis_vendor", "bios_version",
                                                 "board_name", "product_family", "product_sku"};

struct VendorPrefix {
  const char* prefix;
  const char* vm;
};

constexpr std::array<VendorPrefix, 17> kVendorTable{{
    {"KVM", "kvm"},          {"OpenStack", "kvm"},        {"KubeVirt", "kvm"},
    {"Amazon EC2", "amazon"}, {"QEMU", "qemu"},            {"VMware", "vmware"},
    {"VMW", "vmware"},        {"innotek GmbH", "oracle"},  {"VirtualBox", "oracle"},
    {"Oracle Corporation", "oracle"}, {"Xen", "xen"},      {"Bochs", "bochs"},
    {"Parallels", "parallels"}, {"BHYVE", "bhyve"},        {"Hyper-V", "microsoft"},
    {"Apple Virtualization", "apple"}, {"Google Compute Engine", "google"},
}};

struct AcpiOem {
  const char* oem_id;  // 6 bytes, space padded
  const char* product;
  const char* vote;    // nullptr: names a product but proves no VM (also on bare metal)
};

constexpr std::array<AcpiOem, 9> kAcpiOems{{
    {"FIRECK", "Firecracker", "kvm"},  // Firecracker runs only on KVM
    {"CLOUDH", "Cloud Hypervisor", "vm"},
    {"BOCHS ", "QEMU", "vm"},
    {"VRTUAL", "Hyper-V", "microsoft"},
    {"Xen   ", "Xen", "xen"},
    {"VMWARE", "VMware", "vmware"},
    {"VBOX  ", "VirtualBox", "oracle"},
    {"AMAZON", "AWS EC2", nullptr},
    {"Google", "Google Compute Engine", nullptr},
}};

// One DMI file: first line, trimmed; malformed content becomes a warning, never an exception.
std::optional<std::string> read_dmi_field(const HostRoot& root, const char* name, EvidenceLog& log) {
  std::string path = fmt::format("{}/{}", kDmiDir, name);
  FileRead r = root.read(path, kDmiMaxBytes);
  if (r.failure == ReadFailure::missing) return std::nullopt;
  if (!r.ok()) {
    if (r.failure == ReadFailure::permission_denied) log.add(path, "dmi", kNeedsRoot, "nothing");
    else log.warn(path, "dmi", describe_failure(static_cast<int>(r.failure)), "DMI field ignored");
    return std::nullopt;
  }
  std::string_view text = *r.content;
  auto newline = text.find('\n');
  bool extra_lines = newline != std::string_view::npos && !trim(text.substr(newline)).empty();
  std::string_view line = trim(text.substr(0, newline));
  std::string clean = sanitize(line, 120);
  if (clean != line) log.warn(path, "dmi", clean, "non-printable or overlong DMI string; compared as escaped text");
  if (extra_lines) log.warn(path, "dmi", clean, "more than one line; only the first is used");
  return clean;
}

void read_smbios_bit(const HostRoot& root, DmiSignals& s, EvidenceLog& log) {
  const char* path = "/sys/firmware/dmi/entries/0-0/raw";
  FileRead r = root.read(path, kDmiMaxBytes);
  if (r.failure == ReadFailure::missing) return;
  if (r.failure == ReadFailure::permission_denied) {
    s.root_only_unreadable = true;
    log.add(path, "smbios", kNeedsRoot, "nothing: BIOS characteristics (VM bit) not checked");
    return;
  }
  if (!r.ok()) {
    log.warn(path, "smbios", describe_failure(static_cast<int>(r.failure)), "SMBIOS type 0 ignored");
    return;
  }
  const std::string& raw = *r.content;
  // Byte 1 is the structure length; extension byte 2 (offset 0x13) bit 4 = "virtual machine".
  if (raw.size() < 20 || static_cast<unsigned char>(raw[1]) < 20) {
    log.add(path, "smbios", fmt::format("{} bytes, no extension byte 2", raw.size()), "nothing");
    return;
  }
  bool vm_bit = (static_cast<unsigned char>(raw[19]) >> 4) & 1u;
  s.smbios_vm_bit = vm_bit;
  if (vm_bit) {
    log.add(path, "smbios", "VM bit set", "vm: firmware declares a virtual machine");
    log.vote("smbios", "vm");
  } else {
    log.add(path, "smbios", "VM bit clear", "nothing: clear on bare metal, also in QEMU with SeaBIOS");
  }
}

std::string acpi_text(const std::string& raw, std::size_t at, std::size_t n) {
  return raw.size() >= at + n ? raw.substr(at, n) : std::string();
}

void read_acpi_oem(const HostRoot& root, DmiSignals& s, EvidenceLog& log) {
  // FACP (the FADT) is small and, from ACPI 6.0, carries the hypervisor vendor identity.
  for (const char* table : {"FACP", "APIC"}) {
    std::string path = fmt::format("/sys/firmware/acpi/tables/{}", table);
    FileRead r = root.read(path, kAcpiMaxBytes);
    if (r.failure == ReadFailure::missing) continue;
    if (r.failure == ReadFailure::permission_denied) {
      s.root_only_unreadable = true;
      log.add(path, "acpi", kNeedsRoot, "nothing: ACPI OEM id not checked");
      return;
    }
    if (!r.ok() || r.content->size() < 36 || r.content->substr(0, 4) != table) {
      log.warn(path, "acpi", r.ok() ? fmt::format("{} bytes, no {} header", r.content->size(), table)
                                    : describe_failure(static_cast<int>(r.failure)),
               "ACPI header ignored");
      continue;
    }
    const std::string& raw = *r.content;
    s.acpi_oem_id = acpi_text(raw, 10, 6);
    s.acpi_oem_table_id = acpi_text(raw, 16, 8);
    std::string value = fmt::format("OEM '{}' table '{}'", sanitize(*s.acpi_oem_id), sanitize(*s.acpi_oem_table_id));
    if (std::string(table) == "FACP" && raw.size() >= 276) {
      std::string vendor(trim(acpi_text(raw, 268, 8)));
      if (!vendor.empty() && vendor.find('\0') == std::string::npos) {
        s.fadt_hypervisor_vendor = sanitize(vendor, 8);
        value += fmt::format(", hypervisor vendor '{}'", *s.fadt_hypervisor_vendor);
      }
    }
    const AcpiOem* match = nullptr;
    for (const auto& oem : kAcpiOems)
      if (*s.acpi_oem_id == oem.oem_id) match = &oem;
    if (match && match->vote) {
      log.add(path, "acpi", value, fmt::format("product {} ({})", match->product, match->vote));
      log.vote("acpi", match->vote);
    } else if (match) {
      log.add(path, "acpi", value, fmt::format("product hint {} (also on its bare-metal machines)", match->product));
    } else {
      log.add(path, "acpi", value, "nothing: no known VMM OEM id");
    }
    return;
  }
}

}  // namespace

DmiSignals read_dmi_signals(const HostRoot& root, EvidenceLog& log) {
  DmiSignals s;
  s.present = root.is_directory(kDmiDir);
  if (!s.present) {
    log.add(kDmiDir, "dmi", "absent", "no SMBIOS tables: a bare-bones VMM (Firecracker) or a board without SMBIOS");
  } else {
    for (const char* name : kVendorFiles)
      if (auto v = read_dmi_field(root, name, log)) s.fields[name] = *v;
    for (const char* name : kExtraFiles)
      if (auto v = read_dmi_field(root, name, log)) s.fields[name] = *v;
    // systemd: first file (in its order) whose value starts with a known vendor wins.
    for (const char* name : kVendorFiles) {
      auto it = s.fields.find(name);
      if (it == s.fields.end()) continue;
      for (const auto& entry : kVendorTable) {
        if (it->second.rfind(entry.prefix, 0) == 0) {
          s.vendor_vm = entry.vm;
          s.vendor_vm_field = name;
          break;
        }
      }
      if (s.vendor_vm) break;
    }
    for (const char* name : kVendorFiles) {
      auto it = s.fields.find(name);
      if (it == s.fields.end()) continue;
      bool decisive = s.vendor_vm_field && *s.vendor_vm_field == name;
      log.add(fmt::format("{}/{}", kDmiDir, name), "dmi", "'" + it->second + "'",
              decisive ? *s.vendor_vm + ": first DMI vendor match (systemd order)" : "nothing");
    }
    for (const char* name : kExtraFiles) {
      auto it = s.fields.find(name);
      if (it != s.fields.end() && !it->second.empty())
        log.add(fmt::format("{}/{}", kDmiDir, name), "dmi", "'" + it->second + "'", "nothing (product details)");
    }
  }
  read_smbios_bit(root, s, log);
  read_acpi_oem(root, s, log);

  std::string vm = s.vendor_vm.value_or("none");
  if (vm == "amazon") {
    // DMI says Amazon on virtual and .metal instances alike: SMBIOS, then the product name.
    if (s.smbios_vm_bit) {
      vm = *s.smbios_vm_bit ? "amazon" : "none";
    } else {
      const std::string& product = s.fields["product_name"];
      auto at = product.find(".metal");
      bool metal = at != std::string::npos && (at + 6 == product.size() || product[at + 6] == '-');
      if (metal) vm = "none";
      log.add(fmt::format("{}/product_name", kDmiDir), "dmi", "'" + product + "'",
              metal ? "none: '.metal' is an EC2 bare-metal instance" : "amazon: EC2 instance type without '.metal'");
    }
  } else if (vm == "none" && s.smbios_vm_bit.value_or(false)) {
    vm = "vm-other";
  }
  if (s.present || s.smbios_vm_bit) s.vm = vm;
  if (s.present) {
    // The vote may know more than systemd's table: VMMs it lacks still name themselves.
    std::string vote = vm == "vm-other" ? "vm" : vm;
    if (vote == "none") {
      const std::string& vendor = s.fields["sys_vendor"];
      if (vendor.rfind("Microsoft Corporation", 0) == 0 && s.fields["product_name"] == "Virtual Machine")
        vote = "microsoft";
      else if (vendor.rfind("Cloud Hypervisor", 0) == 0)
        vote = "vm";
    }
    log.vote("dmi", vote);
  }
  return s;
}

}  // namespace interprobe::virt
