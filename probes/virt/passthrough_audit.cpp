// The GPU passthrough audit (docs/reference.md §3): per NVIDIA GPU, how it is attached, whether
// its link information is real, NUMA and IOMMU placement, the P2P clique capability a hypervisor
// injects, BAR sizes, and ACS on the bridges above it. Reads the shared PCI inventory; config
// space beyond the 64-byte header (capabilities, ACS) needs root.
#include <cstdint>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/host_root.hpp"
#include "common/text.hpp"
#include "probes/topology/pci_inventory.hpp"
#include "probes/virt/virt_signals.hpp"

namespace interprobe::virt {

namespace {

constexpr std::uint8_t kVendorSpecificCapability = 0x09;
constexpr std::uint16_t kAcsExtendedCapability = 0x000d;
constexpr std::size_t kExtendedStart = 0x100;
constexpr std::uint64_t kResourceMem = 0x200, kResourcePrefetch = 0x2000, kResourceMem64 = 0x100000;
constexpr int kMaxDepth = 32;  // deeper than any real PCIe hierarchy: a loop in a hostile tree

std::string id_of(const report::PciDevice& d) { return d.vendor_id.value_or("") + ":" + d.device_id.value_or(""); }

bool is_emulated_root_port(const std::string& id, bool in_vm) {
  return id == "1b36:000c" || id == "15ad:07a0" || (in_vm && id == "8086:3420");
}
bool is_emulated_switch_port(const std::string& id) { return id == "104c:8232" || id == "104c:8233"; }

std::string domain_of(const std::string& bdf) { return bdf.substr(0, bdf.find(':')); }

// The P2P clique capability QEMU (x-nv-gpudirect-clique) and Cloud Hypervisor inject:
// vendor capability 0x09, length 8, "P2P" at +3, clique id in bits 6:3 of byte +6.
void read_clique(const PciConfigSpace& config, report::GpuPassthrough& g) {
  if (config.bytes.empty()) {
    bool denied = config.failure && config.failure->find("permission") != std::string::npos;
    g.p2p_clique = report::P2pClique::unknown;
    g.p2p_clique_reason = denied ? kNeedsRootReason : config.failure.value_or("config space unreadable");
    return;
  }
  if (!config.has_capability_area()) {
    g.p2p_clique = report::P2pClique::unknown;
    g.p2p_clique_reason = kNeedsRootReason;  // unprivileged reads stop at the 64-byte header
    return;
  }
  for (const auto& cap : parse_pci_capabilities(config.bytes)) {
    if (cap.id != kVendorSpecificCapability || cap.body.size() < 7) continue;
    if (cap.body[3] == 'P' && cap.body[4] == '2' && cap.body[5] == 'P') {
      g.p2p_clique = report::P2pClique::present;
      g.p2p_clique_id = (cap.body[6] >> 3) & 0x0f;
      g.p2p_capability_offset = cap.offset;
      return;
    }
  }
  g.p2p_clique = report::P2pClique::absent;
}

report::BridgeAcs read_acs(const HostRoot& root, const report::PciDevice& bridge) {
  report::BridgeAcs a;
  a.bdf = bridge.bdf;
  a.vendor_device = id_of(bridge);
  PciConfigSpace config = read_pci_config(root, bridge.bdf);
  if (config.bytes.size() <= kExtendedStart) {
    bool header_only = config.bytes.size() == 64 ||
                       (config.failure && config.failure->find("permission") != std::string::npos);
    a.unknown_reason = header_only ? std::string(kNeedsRoot)
                                   : config.bytes.empty() ? "unknown: " + config.failure.value_or("unreadable")
                                                          : "unknown: no extended config space (conventional PCI or emulated)";
    return a;
  }
  const auto& b = config.bytes;
  auto u16 = [&](std::size_t o) { return static_cast<unsigned>(b[o] | (b[o + 1] << 8)); };
  std::set<std::size_t> visited;
  std::size_t offset = kExtendedStart;
  a.acs_present = false;
  while (offset >= kExtendedStart && offset + 8 <= b.size() && visited.insert(offset).second) {
    unsigned header_low = u16(offset), header_high = u16(offset + 2);
    if (header_low == 0 && header_high == 0) break;  // an empty extended list
    if (header_low == kAcsExtendedCapability) {
      unsigned control = u16(offset + 6);
      static constexpr std::pair<unsigned, const char*> kBits[] = {
          {0x01, "SV"}, {0x02, "TB"}, {0x04, "RR"}, {0x08, "CR"}, {0x10, "UF"}, {0x20, "EC"}, {0x40, "DT"}};
      std::string enabled;
      for (auto [bit, name] : kBits)
        if (control & bit) enabled += (enabled.empty() ? "" : " ") + std::string(name);
      a.acs_present = true;
      a.acs_enabled = enabled;
      a.p2p_redirect = (control & 0x0c) != 0;
      return a;
    }
    offset = (header_high >> 4) & 0xffc;
  }
  return a;
}

void read_bars(const HostRoot& root, report::GpuPassthrough& g) {
  auto text = root.read_text(fmt::format("/sys/bus/pci/devices/{}/resource", g.bdf));
  if (!text) return;
  int index = 0;
  for (const auto& line : split(*text, '\n')) {
    if (index > 5) break;  // 6 is the expansion ROM, then SR-IOV BARs
    auto fields = split_whitespace(line);
    int this_index = index++;
    if (fields.size() < 3) continue;
    auto start = parse_hex(fields[0]), end = parse_hex(fields[1]), flags = parse_hex(fields[2]);
    if (!start || !end || !flags || *end <= *start || !(*flags & kResourceMem)) continue;
    if (*end - *start >= static_cast<std::uint64_t>(INT64_MAX)) continue;  // no BAR spans 2^63 bytes
    report::PciBar bar;
    bar.index = this_index;
    bar.size_bytes = static_cast<std::int64_t>(*end - *start + 1);
    bar.prefetchable = (*flags & kResourcePrefetch) != 0;
    bar.is_64bit = (*flags & kResourceMem64) != 0;
    g.bars.push_back(bar);
  }
  // BAR1 is NVIDIA's framebuffer aperture; fall back to the largest prefetchable BAR.
  for (const auto& bar : g.bars)
    if (bar.index == 1 && bar.prefetchable) g.bar1_bytes = bar.size_bytes;
  if (!g.bar1_bytes)
    for (const auto& bar : g.bars)
      if (bar.prefetchable && (!g.bar1_bytes || bar.size_bytes > *g.bar1_bytes)) g.bar1_bytes = bar.size_bytes;
}

void classify_attachment(const HostRoot& root, const report::PciDevice& gpu,
                         const std::vector<const report::PciDevice*>& chain, const report::VirtSection& out,
                         report::GpuPassthrough& g) {
  const bool in_vm = out.hypervisor != "none";
  const bool hyperv = out.hypervisor == "microsoft" || out.product == std::optional<std::string>("Azure") ||
                      out.product == std::optional<std::string>("Hyper-V");
  std::string dir = fmt::format("/sys/bus/pci/devices/{}", gpu.bdf);
  auto raw_speed = root.read_text(dir + "/current_link_speed");
  auto raw_width = root.read_text(dir + "/current_link_width");
  bool zeroed = raw_width && *raw_width == "0" && raw_speed && raw_speed->rfind("Unknown", 0) == 0;
  if (chain.empty()) {
    if (hyperv && domain_of(gpu.bdf) != "0000") {
      g.attachment = report::Attachment::hyperv_vpci;
      g.attachment_detail = fmt::format("Hyper-V virtual PCI: own domain {} (from the VMBus GUID), no bridges above",
                                        domain_of(gpu.bdf));
    } else if (zeroed || gpu.port_type == report::PciePortType::rc_integrated_endpoint) {
      g.attachment = report::Attachment::root_bus_integrated;
      g.attachment_detail = "on the root bus as a root-complex integrated endpoint; link registers zeroed";
      g.link_synthetic = true;
      g.link_detail = fmt::format("current_link_speed '{}', current_link_width '{}': QEMU zeroes the link of "
                                  "devices on the Q35 root bus",
                                  sanitize(raw_speed.value_or("-"), 30), sanitize(raw_width.value_or("-"), 10));
    } else {
      g.attachment = report::Attachment::root_bus;
      g.attachment_detail = in_vm ? "directly on a root bus (no port above)" : "directly on a root bus";
      if (!raw_speed) g.link_detail = "no PCIe link attributes (conventional PCI bus, e.g. i440fx)";
    }
    return;
  }
  const std::string nearest = id_of(*chain.front());
  bool emulated_switch = false;
  for (const auto* b : chain) emulated_switch = emulated_switch || is_emulated_switch_port(id_of(*b));
  if (emulated_switch) {
    g.attachment = report::Attachment::emulated_switch;
    g.attachment_detail = "behind QEMU's emulated PCIe switch (TI XIO3130 ids 104c:8232/8233)";
  } else if (is_emulated_root_port(nearest, in_vm)) {
    g.attachment = report::Attachment::emulated_root_port;
    g.attachment_detail = fmt::format("behind an emulated root port {} ({})", chain.front()->bdf, nearest);
  } else if (chain.front()->kind == report::PciKind::pcie_switch_port ||
             chain.front()->port_type == report::PciePortType::downstream) {
    g.attachment = report::Attachment::real_switch;
    g.attachment_detail = fmt::format("behind PCIe switch port {} ({})", chain.front()->bdf, nearest);
  } else if (chain.front()->kind == report::PciKind::root_port) {
    g.attachment = report::Attachment::real_root_port;
    g.attachment_detail = fmt::format("behind root port {} ({})", chain.front()->bdf, nearest);
  } else {
    g.attachment = report::Attachment::unknown;
    g.attachment_detail = fmt::format("behind bridge {} ({})", chain.front()->bdf, nearest);
  }
  if (g.attachment == report::Attachment::emulated_root_port || g.attachment == report::Attachment::emulated_switch) {
    g.link_synthetic = true;
    g.link_detail = "the port's link capabilities are emulated: they say what the VMM chose, not what the slot is";
  } else if (!in_vm) {
    g.link_synthetic = false;
  }
}

}  // namespace

void audit_gpus(const HostRoot& root, const PciSignals& pci, report::VirtSection& out) {
  std::map<std::string, const report::PciDevice*> by_bdf;
  for (const auto& d : pci.devices) by_bdf[d.bdf] = &d;
  for (const auto& gpu : pci.devices) {
    if (gpu.kind != report::PciKind::gpu || gpu.vendor_id != "10de") continue;
    report::GpuPassthrough g;
    g.bdf = gpu.bdf;
    g.vendor_device = id_of(gpu);
    g.device_name = gpu.device_name;
    g.driver = gpu.driver;
    std::vector<const report::PciDevice*> chain;
    std::set<std::string> visited{gpu.bdf};
    for (auto parent = gpu.parent_bdf; parent && chain.size() < kMaxDepth; ) {
      auto it = by_bdf.find(*parent);
      if (it == by_bdf.end() || !visited.insert(*parent).second) break;
      chain.push_back(it->second);
      g.path_above.push_back(fmt::format("{} {} {}", it->second->bdf, id_of(*it->second), report::to_string(it->second->kind)));
      parent = it->second->parent_bdf;
    }
    classify_attachment(root, gpu, chain, out, g);
    g.gpu_max_gts = gpu.link.max_gts;
    g.gpu_current_gts = gpu.link.current_gts;
    g.gpu_max_lanes = gpu.link.max_lanes;
    if (!chain.empty()) g.port_max_gts = chain.front()->link.max_gts;
    g.numa_node = gpu.numa_node;
    g.numa_exposed = gpu.numa_node.has_value();
    g.iommu_group = gpu.iommu_group;
    if (gpu.iommu_group)
      for (const auto& d : pci.devices)
        if (d.bdf != gpu.bdf && d.iommu_group == gpu.iommu_group) g.iommu_group_peers.push_back(d.bdf + " " + id_of(d));
    read_clique(read_pci_config(root, gpu.bdf), g);
    read_bars(root, g);
    for (const auto* bridge : chain) g.acs_above.push_back(read_acs(root, *bridge));
    out.gpus.push_back(std::move(g));
  }
}

}  // namespace interprobe::virt
