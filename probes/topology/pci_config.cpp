// Config space: read as much of <bdf>/config as the root lets us, and walk its capability list.
#include <set>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "probes/topology/pci_inventory.hpp"

namespace interprobe {

namespace {

constexpr std::size_t kConfigHeaderBytes = 64;
constexpr std::size_t kExtendedConfigBytes = 4096;
constexpr std::uint8_t kStatusCapabilityListBit = 0x10;
constexpr std::uint8_t kVendorSpecificCapability = 0x09;

}  // namespace

PciConfigSpace read_pci_config(const HostRoot& root, std::string_view bdf) {
  PciConfigSpace out;
  if (!is_pci_bdf(bdf)) {
    out.failure = fmt::format("'{}' is not a PCI address", std::string(bdf));
    return out;
  }
  std::string path = fmt::format("/sys/bus/pci/devices/{}/config", std::string(bdf));
  FileRead r;
  try {
    r = root.read(path, kExtendedConfigBytes);
  } catch (const RootEscapeError& e) {
    out.failure = e.what();
    return out;
  }
  if (!r.ok()) {
    out.failure = fmt::format("{}: {}", path, to_string(r.failure));
    return out;
  }
  out.bytes.assign(r.content->begin(), r.content->end());
  if (out.bytes.size() < kConfigHeaderBytes)
    out.failure = fmt::format("{}: only {} bytes (a config header has 64)", path, out.bytes.size());
  return out;
}

std::vector<PciCapability> parse_pci_capabilities(const std::vector<std::uint8_t>& config) {
  std::vector<PciCapability> caps;
  if (config.size() <= kConfigHeaderBytes) return caps;
  std::uint16_t status = static_cast<std::uint16_t>(config[0x06] | (config[0x07] << 8));
  if (!(status & kStatusCapabilityListBit)) return caps;
  std::set<std::size_t> visited;
  std::size_t offset = config[0x34] & 0xfc;  // the low two bits are reserved
  const std::size_t limit = std::min<std::size_t>(config.size(), 256);  // standard caps live below 256
  while (offset >= kConfigHeaderBytes && offset + 2 <= limit && visited.insert(offset).second) {
    PciCapability cap;
    cap.id = config[offset];
    cap.offset = static_cast<std::uint8_t>(offset);
    if (cap.id == kVendorSpecificCapability && offset + 3 <= limit) {
      std::size_t length = config[offset + 2];
      std::size_t end = std::min(offset + length, limit);
      cap.body.assign(config.begin() + static_cast<std::ptrdiff_t>(offset), config.begin() + static_cast<std::ptrdiff_t>(end));
    }
    caps.push_back(std::move(cap));
    offset = config[offset + 1] & 0xfc;
  }
  return caps;
}

}  // namespace interprobe

// --- PCI Express capability (kept here: it is config-space decoding too) ----------------------
#include "probes/topology/pci_express.hpp"

namespace interprobe {

namespace {

constexpr std::uint8_t kPciExpressCapability = 0x10;

std::optional<double> encoded_speed_gts(unsigned code) {
  static constexpr double kRates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  if (code >= 1 && code <= 6) return kRates[code - 1];
  return std::nullopt;
}

std::optional<int> encoded_width(unsigned code) {
  if (code >= 1 && code <= 32) return static_cast<int>(code);
  return std::nullopt;
}

}  // namespace

std::optional<PcieCapabilityInfo> decode_pcie_capability(const std::vector<std::uint8_t>& config) {
  for (const auto& cap : parse_pci_capabilities(config)) {
    if (cap.id != kPciExpressCapability) continue;
    std::size_t at = cap.offset;
    if (at + 0x14 > config.size()) return std::nullopt;
    auto u16 = [&](std::size_t o) { return static_cast<unsigned>(config[at + o] | (config[at + o + 1] << 8)); };
    auto u32 = [&](std::size_t o) { return u16(o) | (u16(o + 2) << 16); };
    PcieCapabilityInfo info;
    info.port_type = static_cast<int>((u16(0x02) >> 4) & 0xf);
    unsigned link_capabilities = u32(0x0c);
    unsigned link_status = u16(0x12);
    info.max_gts = encoded_speed_gts(link_capabilities & 0xf);
    info.max_lanes = encoded_width((link_capabilities >> 4) & 0x3f);
    info.current_gts = encoded_speed_gts(link_status & 0xf);
    info.current_lanes = encoded_width((link_status >> 4) & 0x3f);
    return info;
  }
  return std::nullopt;
}

std::optional<report::PciePortType> port_type_name(int port_type) {
  using report::PciePortType;
  switch (port_type) {
    case 0: return PciePortType::endpoint;
    case 1: return PciePortType::legacy_endpoint;
    case 4: return PciePortType::root_port;
    case 5: return PciePortType::upstream;
    case 6: return PciePortType::downstream;
    case 7: return PciePortType::pcie_to_pci_bridge;
    case 8: return PciePortType::pci_to_pcie_bridge;
    case 9: return PciePortType::rc_integrated_endpoint;
    case 10: return PciePortType::rc_event_collector;
    default: return std::nullopt;
  }
}

}  // namespace interprobe
