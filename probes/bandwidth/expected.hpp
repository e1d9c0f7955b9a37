#pragma once
// What a GPU path should reach, from the topology section: the slowest link on the path
// (raw PCIe rate, or NVLink links x per-link rate). Pure: tests feed it fixtures.
#include <map>
#include <optional>
#include <string>

#include "model/bandwidth.hpp"
#include "model/topology.hpp"

namespace interprobe {

struct ExpectedRate {
  double gbps = 0;
  std::string basis;  // "slowest PCIe link gpu0 -> root: 63.0 GB/s (32 GT/s x16)"
};

// Slowest known PCIe link from the device up to its root port; nullopt when none is known.
std::optional<ExpectedRate> pcie_path_to_host(const report::TopologySection& topology, const std::string& bdf);

// Expected rate of a CUDA sweep (kind, src, dst are gpuN / hostN names); `gpu_bdf` maps gpuN to
// its PCI address. nullopt for paths without a link model (d2d, host engine) or when the
// topology does not know the links.
std::optional<ExpectedRate> expected_rate(const report::TopologySection& topology, const report::BandwidthSweep& sweep,
                                          const std::map<std::string, std::string>& gpu_bdf);

}  // namespace interprobe
