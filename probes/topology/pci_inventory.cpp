// The PCI inventory read from sysfs through HostRoot. libpci supplies names only: its sysfs back
// end calls a fatal error handler on a missing attribute, and a garbage tree must survive here.
#include "probes/topology/pci_inventory.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/text.hpp"
#include "probes/topology/pci_express.hpp"
#include "probes/topology/pci_kind.hpp"
#include "probes/topology/pci_link.hpp"
#include "probes/topology/pci_names.hpp"

namespace interprobe {

namespace {

constexpr const char* kDevicesDir = "/sys/bus/pci/devices";
constexpr std::size_t kAttributeMaxBytes = 64 * 1024;

bool all_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

std::optional<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>> parse_bdf(std::string_view s) {
  if (!is_pci_bdf(s)) return std::nullopt;
  auto colon1 = s.find(':');
  auto colon2 = s.find(':', colon1 + 1);
  auto dot = s.find('.', colon2 + 1);
  return std::make_tuple(*parse_hex(s.substr(0, colon1)), *parse_hex(s.substr(colon1 + 1, 2)),
                         *parse_hex(s.substr(colon2 + 1, 2)), *parse_hex(s.substr(dot + 1)));
}

// "pci0000:40" (also "pci10000:e0" behind Intel VMD and Hyper-V's "pci7870:00").
bool is_root_bus_name(std::string_view s) {
  if (s.size() < 9 || s.substr(0, 3) != "pci") return false;
  auto colon = s.find(':');
  if (colon == std::string_view::npos || colon < 7 || colon > 11 || s.size() != colon + 3) return false;
  return all_hex(s.substr(3, colon - 3)) && all_hex(s.substr(colon + 1));
}

bool is_cpulist(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == ',' || c == '-'; });
}

std::string basename_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

class DeviceReader {
 public:
  DeviceReader(const HostRoot& root, report::PciDevice& dev, std::string dir) : root_(root), dev_(dev), dir_(std::move(dir)) {}

  void warn(const std::string& what) { dev_.warnings.push_back(fmt::format("{}: {}", dev_.bdf, what)); }

  // The attribute's trimmed text; a missing file is silent unless `required`, anything else warns.
  std::optional<std::string> text(const char* name, bool required) {
    FileRead r = root_.read(dir_ + "/" + name, kAttributeMaxBytes);
    if (r.ok()) return std::string(trim(*r.content));
    if (required || r.failure != ReadFailure::missing) warn(fmt::format("{}: {}", name, to_string(r.failure)));
    return std::nullopt;
  }

  // vendor/device ("0x10de") and class ("0x030200") with the digit count the report uses.
  std::optional<std::string> hex_id(const char* name, std::size_t digits) {
    auto raw = text(name, true);
    if (!raw) return std::nullopt;
    auto value = parse_hex(*raw);
    if (!value || *value >> (4 * digits) != 0 || raw->size() > digits + 2) {
      warn(fmt::format("{}: garbage '{}'", name, raw->substr(0, 40)));
      return std::nullopt;
    }
    return fmt::format("{:0{}x}", *value, digits);
  }

  std::optional<std::string> link_basename(const char* name) {
    auto target = root_.link_target(dir_ + "/" + name);
    if (!target) return std::nullopt;
    std::string base = basename_of(*target);
    if (base.empty() || base == "." || base == "..") {
      warn(fmt::format("{}: link target '{}' has no name", name, target->substr(0, 80)));
      return std::nullopt;
    }
    return base;
  }

  template <class T>
  std::optional<T> link_value(const char* name, LinkAttribute<T> (*parse)(std::string_view), bool* present) {
    auto raw = text(name, false);
    if (!raw) return std::nullopt;
    *present = true;
    auto parsed = parse(*raw);
    if (parsed.garbage) warn(fmt::format("{}: garbage '{}'", name, raw->substr(0, 40)));
    return parsed.value;
  }

 private:
  const HostRoot& root_;
  report::PciDevice& dev_;
  std::string dir_;
};

// Position in the tree from the canonical path: /sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0
void place_in_tree(report::PciDevice& dev, const std::string& canonical, DeviceReader& reader) {
  auto parts = split(canonical, '/');
  std::optional<std::string> previous_bdf;
  bool found_self = false;
  for (const auto& part : parts) {
    if (is_root_bus_name(part)) {
      dev.root_bus = part;
      previous_bdf.reset();  // a bridge above a root bus is no PCI parent
    } else if (is_pci_bdf(part)) {
      if (to_lower(part) == to_lower(dev.bdf)) {
        found_self = true;
        break;
      }
      previous_bdf = to_lower(part);
    } else if (dev.root_bus) {
      previous_bdf.reset();  // something other than a PCI function sits between (e.g. a VMD domain)
    }
  }
  if (!found_self) reader.warn(fmt::format("canonical path {} does not end in the device's own address", canonical));
  if (!dev.root_bus) reader.warn(fmt::format("canonical path {} names no root bus (pciDDDD:BB)", canonical));
  if (found_self) dev.parent_bdf = previous_bdf;
}

}  // namespace

// Kind from class, vendor and place: bridges need the port type or, without it, the tree.
report::PciKind classify_pci_kind(const report::PciDevice& dev, bool has_link_files) {
  using report::PciKind;
  using report::PciePortType;
  const std::string c = dev.class_id.value_or("");
  std::string base_sub = c.size() == 6 ? c.substr(0, 4) : "";
  if (dev.vendor_id == "10de") {
    if (base_sub == "0300" || base_sub == "0302" || base_sub == "0380") return PciKind::gpu;
    if (base_sub == "0680" || dev.device_id == "1af1" || dev.device_id == "22a3") return PciKind::nvswitch;
  }
  if (base_sub == "0207") return PciKind::infiniband;
  if (base_sub == "0200" || base_sub == "0280") return PciKind::nic;
  if (base_sub == "0108") return PciKind::nvme;
  if (base_sub == "0600") return PciKind::host_bridge;
  if (base_sub == "0604" || base_sub == "0609") {
    if (dev.port_type == PciePortType::root_port) return PciKind::root_port;
    if (dev.port_type == PciePortType::upstream || dev.port_type == PciePortType::downstream)
      return PciKind::pcie_switch_port;
    if (dev.port_type) return PciKind::other;  // PCIe-to-PCI bridges and the like
    if (!has_link_files) return PciKind::other;  // a conventional PCI-PCI bridge (i440fx guests)
    return dev.parent_bdf ? PciKind::pcie_switch_port : PciKind::root_port;
  }
  return PciKind::other;
}

namespace {

// The RDMA device the function registered (mlx5_0: what NCCL_IB_HCA names), else its first
// network interface; names are machine strings, kept short.
std::optional<std::string> network_name_of(const HostRoot& root, const std::string& device_dir) {
  for (const char* sub : {"/infiniband", "/net"}) {
    auto names = root.list(device_dir + sub);
    if (!names.empty() && names.front().size() <= 64) return names.front();
  }
  return std::nullopt;
}

report::PciDevice read_device(const HostRoot& root, const std::string& bdf) {
  report::PciDevice dev;
  dev.bdf = to_lower(bdf);
  std::string entry = std::string(kDevicesDir) + "/" + bdf;
  DeviceReader probe_entry(root, dev, entry);
  std::optional<std::string> canonical;
  try {
    canonical = root.canonical(entry);
  } catch (const RootEscapeError& e) {
    probe_entry.warn(fmt::format("link leaves the root ({}); attributes not read", e.what()));
    dev.kind = report::PciKind::other;
    return dev;
  }
  if (!canonical) {
    ResolvedPath failed = root.resolve(entry);
    probe_entry.warn(fmt::format("cannot resolve {} ({}); attributes not read", entry, to_string(failed.failure)));
    dev.kind = report::PciKind::other;
    return dev;
  }
  DeviceReader reader(root, dev, *canonical);
  place_in_tree(dev, *canonical, reader);
  dev.vendor_id = reader.hex_id("vendor", 4);
  dev.device_id = reader.hex_id("device", 4);
  dev.class_id = reader.hex_id("class", 6);
  dev.driver = reader.link_basename("driver");
  if (auto group = reader.link_basename("iommu_group")) {
    if (auto n = parse_int(*group); n && *n >= 0) dev.iommu_group = static_cast<int>(*n);
    else reader.warn(fmt::format("iommu_group: link names '{}', not a group number", group->substr(0, 40)));
  }
  if (dev.class_id.value_or("").starts_with("02")) dev.network_name = network_name_of(root, *canonical);
  if (auto numa = reader.text("numa_node", false)) {
    auto n = parse_int(*numa);
    if (!n || *n < -1 || *n > 65535) reader.warn(fmt::format("numa_node: garbage '{}'", numa->substr(0, 40)));
    else if (*n >= 0) dev.numa_node = static_cast<int>(*n);
  }
  if (auto cpus = reader.text("local_cpulist", false)) {
    if (is_cpulist(*cpus)) dev.local_cpus = *cpus;
    else reader.warn(fmt::format("local_cpulist: garbage '{}'", cpus->substr(0, 40)));
  }
  bool has_link_files = false;
  dev.link.current_gts = reader.link_value<double>("current_link_speed", parse_link_speed_gts, &has_link_files);
  dev.link.current_lanes = reader.link_value<int>("current_link_width", parse_link_width, &has_link_files);
  dev.link.max_gts = reader.link_value<double>("max_link_speed", parse_link_speed_gts, &has_link_files);
  dev.link.max_lanes = reader.link_value<int>("max_link_width", parse_link_width, &has_link_files);
  // As root the whole config space is readable: the port type of bridges, and link fields sysfs
  // lacks. Only bridges are read: each config read traps to the hypervisor in a VM (~7 ms per
  // device measured in a Firecracker guest), and unprivileged reads stop at the 64-byte header.
  const std::string class_id = dev.class_id.value_or("");
  bool is_bridge = class_id.starts_with("0604") || class_id.starts_with("0609");
  bool config_useful = is_bridge && (!root.is_live() || ::geteuid() == 0);
  PciConfigSpace config = config_useful ? read_pci_config(root, dev.bdf) : PciConfigSpace{};
  if (auto pcie = decode_pcie_capability(config.bytes)) {
    dev.port_type = port_type_name(pcie->port_type);
    if (!has_link_files) {
      dev.link.current_gts = pcie->current_gts;
      dev.link.current_lanes = pcie->current_lanes;
      dev.link.max_gts = pcie->max_gts;
      dev.link.max_lanes = pcie->max_lanes;
      has_link_files = true;
    }
  }
  complete_link(dev.link);
  // QEMU's emulated bridges (1b36:*) report synthetic link registers (a pcie-root-port says
  // 16 GT/s x32 whatever sits below): "below its maximum" means nothing there.
  if (dev.vendor_id == "1b36") dev.link.downtrained.reset();
  dev.kind = classify_pci_kind(dev, has_link_files);
  return dev;
}

}  // namespace

void fill_pci_names(const HostRoot& root, std::vector<report::PciDevice>& devices, std::vector<std::string>* warnings) {
  std::set<unsigned> vendors;
  for (const auto& d : devices)
    if (auto v = parse_hex(d.vendor_id.value_or(""))) vendors.insert(static_cast<unsigned>(*v));
  if (vendors.empty()) return;
  PciNameDatabase names(root, vendors);
  if (warnings && names.unavailable_reason()) warnings->push_back("PCI names: " + *names.unavailable_reason());
  for (auto& d : devices) {
    auto v = parse_hex(d.vendor_id.value_or(""));
    if (!v) continue;
    d.vendor_name = names.vendor_name(static_cast<unsigned>(*v));
    if (auto id = parse_hex(d.device_id.value_or(""))) d.device_name = names.device_name(static_cast<unsigned>(*v), static_cast<unsigned>(*id));
  }
}

bool is_pci_bdf(std::string_view s) {
  // DDDD[DDDD]:BB:DD.F
  auto colon1 = s.find(':');
  if (colon1 == std::string_view::npos || colon1 < 4 || colon1 > 8) return false;
  if (s.size() != colon1 + 8) return false;
  return all_hex(s.substr(0, colon1)) && all_hex(s.substr(colon1 + 1, 2)) && s[colon1 + 3] == ':' &&
         all_hex(s.substr(colon1 + 4, 2)) && s[colon1 + 6] == '.' && s[colon1 + 7] >= '0' && s[colon1 + 7] <= '7';
}

bool bdf_less(const std::string& a, const std::string& b) {
  auto pa = parse_bdf(a);
  auto pb = parse_bdf(b);
  if (pa && pb) return *pa < *pb;
  if (pa || pb) return pa.has_value();  // well-formed addresses first
  return a < b;
}

std::vector<report::PciDevice> read_pci_inventory(const HostRoot& root, std::vector<std::string>* warnings) {
  std::vector<report::PciDevice> devices;
  if (!root.is_directory(kDevicesDir)) {
    if (warnings) warnings->push_back(fmt::format("{}: missing; no PCI devices listed", kDevicesDir));
    return devices;
  }
  for (const auto& entry : root.list(kDevicesDir)) {
    if (!is_pci_bdf(entry)) {
      if (warnings) warnings->push_back(fmt::format("{}/{}: not a PCI address; skipped", kDevicesDir, entry.substr(0, 40)));
      continue;
    }
    devices.push_back(read_device(root, entry));
  }
  fill_pci_names(root, devices, warnings);
  std::sort(devices.begin(), devices.end(), [](const auto& a, const auto& b) { return bdf_less(a.bdf, b.bdf); });
  if (warnings)
    for (const auto& d : devices) warnings->insert(warnings->end(), d.warnings.begin(), d.warnings.end());
  return devices;
}

}  // namespace interprobe
