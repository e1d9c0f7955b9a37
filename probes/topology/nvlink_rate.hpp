#pragma once
// What one NVLink carries, from what NVML reports. nvmlDeviceGetNvLinkVersion returns
// nvmlNvlinkVersion_t (1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0), not the
// generation; Hopper parts are reported to return 7 although their links are NVLink 4, so the
// architecture decides there (docs/reference.md §12).
#include <cstdint>
#include <optional>
#include <string>

namespace interprobe {

// GB/s per link and direction (20 NVLink 1.0, 25 NVLink 2.x-4.0, 50 NVLink 5.0); nullopt when
// neither the version nor the architecture says. `compute_capability` is "9.0"; `name` (NVML's or
// pci.ids') is the last resort when the compute capability is unknown.
std::optional<double> nvlink_gbps_per_link(std::optional<std::int64_t> nvml_version,
                                           const std::optional<std::string>& compute_capability,
                                           const std::optional<std::string>& name);

// The major compute capability from "9.0"; nullopt for anything else.
std::optional<int> compute_capability_major(const std::optional<std::string>& compute_capability);

}  // namespace interprobe
