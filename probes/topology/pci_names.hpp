#pragma once
// Vendor and device names from pci.ids through libpci. Without libpci (compiled out) or without
// a pci.ids database every lookup returns nullopt and `unavailable_reason` says why.
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace interprobe {

class HostRoot;

class PciNameDatabase {
 public:
  // libpci's sysfs.path parameter points at the root's /sys, so the same access object reads the
  // same tree as the rest of the probe; names come from the pci.ids of the machine running
  // interprobe (INTERPROBE_PCI_IDS overrides the file), never from the network or udev's hwdb.
  // libpci parses the whole 1.3 MB pci.ids (~40 ms) before its first lookup; only the sections of
  // `vendors` are handed to it (an in-memory copy), which keeps the probe fast.
  PciNameDatabase(const HostRoot& root, const std::set<unsigned>& vendors);
  ~PciNameDatabase();
  PciNameDatabase(const PciNameDatabase&) = delete;
  PciNameDatabase& operator=(const PciNameDatabase&) = delete;

  std::optional<std::string> vendor_name(unsigned vendor_id);
  std::optional<std::string> device_name(unsigned vendor_id, unsigned device_id);
  // Set when names cannot be looked up at all (compiled out, database missing).
  const std::optional<std::string>& unavailable_reason() const { return unavailable_reason_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::optional<std::string> unavailable_reason_;
};

}  // namespace interprobe
