#pragma once
// The topology probe (issue 3): PCI inventory, CPUs/NUMA, GPUs, the path between every GPU pair,
// NVLink and each GPU's nearest NICs. Fills the `topology` section of the report.
#include <memory>
#include <optional>
#include <string>

#include "probes/runner/probe.hpp"
#include "model/topology.hpp"

namespace interprobe {

class HostRoot;
struct NvmlTopology;

struct TopologyOptions {
  std::optional<std::string> hwloc_xml;      // build from an `lstopo --of xml` export instead of sysfs
  std::optional<std::string> record_nvml_to; // write the NVML data used to this file (live only)
};

// Reads everything from the root (sysfs, NVML when live or recorded) into `section` as it goes.
void read_topology(const HostRoot& root, const TopologyOptions& options, report::TopologySection& section);

// GPUs, pairs and nearest NICs from an inventory already in `section`, enriched by NVML data
// when given. Used by the sysfs and the hwloc XML paths alike.
void derive_gpu_topology(report::TopologySection& section, const NvmlTopology* nvml);

std::unique_ptr<Probe> make_topology_probe(TopologyOptions options = {});

}  // namespace interprobe
