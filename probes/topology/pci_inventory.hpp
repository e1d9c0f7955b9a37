#pragma once
// The PCI inventory: every PCI function the root shows under /sys/bus/pci/devices, with ids,
// names (pci.ids through libpci when compiled in), kind, driver, parent bridge, root bus, NUMA
// locality, IOMMU group and link speed/width. Shared by the topology probe and the
// virtualization probe's passthrough audit.
//
// Robustness contract: a garbage, truncated, missing or looping sysfs attribute never drops the
// device and never throws; the field stays null and a warning naming the file is added to the
// device's `warnings` (and to `*warnings` when given). Only a tree that tries to leave the root
// (RootEscapeError) propagates.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/topology.hpp"

namespace interprobe {

class HostRoot;

// Every PCI function, sorted by BDF (domain, bus, device, function). `warnings` collects one line
// per problem ("0000:43:00.0: current_link_speed: garbage 'fast'"), devices' own lists too.
std::vector<report::PciDevice> read_pci_inventory(const HostRoot& root, std::vector<std::string>* warnings = nullptr);

// --- config space ---------------------------------------------------------------------------

struct PciConfigSpace {
  std::vector<std::uint8_t> bytes;  // as much as was readable: 64 unprivileged, 256/4096 as root
  std::optional<std::string> failure;  // why nothing (or less than the header) could be read
  // Unprivileged reads of `config` return only the 64-byte header: no capability list.
  bool has_capability_area() const { return bytes.size() > 64; }
};

// Reads <root>/sys/bus/pci/devices/<bdf>/config (at most 4096 bytes).
PciConfigSpace read_pci_config(const HostRoot& root, std::string_view bdf);

struct PciCapability {
  std::uint8_t id = 0;       // 0x10 PCI Express, 0x09 vendor specific, 0x05 MSI, 0x11 MSI-X ...
  std::uint8_t offset = 0;   // where it starts in config space
  // For vendor-specific capabilities (id 0x09): byte 2 is the length; `body` holds that many bytes
  // from `offset` (clipped to what was read). Empty for other ids.
  std::vector<std::uint8_t> body;
};

// Walks the standard capability list (pointer at 0x34, status bit 4 set). Stops on a pointer
// outside the bytes read, a pointer into the header, or a loop (every offset visited once), so a
// hostile config file yields a short list, never a hang. Empty when only 64 bytes were readable.
std::vector<PciCapability> parse_pci_capabilities(const std::vector<std::uint8_t>& config);

// --- helpers shared by the topology code ------------------------------------------------------

// Vendor and device names from pci.ids (libpci) for devices whose ids are known; names stay null
// when libpci is compiled out or the database lacks them.
void fill_pci_names(const HostRoot& root, std::vector<report::PciDevice>& devices, std::vector<std::string>* warnings);

// "0000:43:00.0" -> true (lowercase or uppercase hex); rejects anything else.
bool is_pci_bdf(std::string_view name);
// Orders BDFs numerically (domain, bus, device, function).
bool bdf_less(const std::string& a, const std::string& b);

}  // namespace interprobe
