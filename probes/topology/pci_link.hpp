#pragma once
// PCIe link attributes as the kernel prints them in sysfs, and link bandwidth in hwloc's
// convention (docs/reference.md §5).
#include <optional>
#include <string>
#include <string_view>

#include "model/topology.hpp"

namespace interprobe {

// What a sysfs link attribute said: a value, "the kernel does not know" (Unknown, width 0: data,
// no warning) or garbage (warning).
template <class T>
struct LinkAttribute {
  std::optional<T> value;
  bool garbage = false;
};

// "2.5 GT/s PCIe", "8.0 GT/s PCIe", "32.0 GT/s PCIe" (kernels >= 5.7) and "2.5 GT/s", "8 GT/s"
// (kernels <= 5.6); "Unknown" / "Unknown speed" mean the kernel could not tell.
LinkAttribute<double> parse_link_speed_gts(std::string_view text);
// Plain lane count; 0 means unknown (QEMU zeroes the link registers of integrated endpoints).
LinkAttribute<int> parse_link_width(std::string_view text);

// Usable fraction of the raw signalling rate: 8b/10b up to 5 GT/s, 128b/130b up to 32 GT/s,
// FLIT 242/256 from 64 GT/s.
double link_encoding_efficiency(double gts);
// hwloc's convention: GT/s x encoding x width / 8, GB/s per direction.
double link_gbps(double gts, std::int64_t width);

// Fills the gbps fields and `downtrained` from the speeds and widths already set.
void complete_link(report::PciLink& link);

}  // namespace interprobe
