#pragma once
// The topology from an hwloc XML export (`lstopo --of xml`), loaded with hwloc's own XML
// importer: PCI devices and bridges (link rates in GB/s only), NUMA nodes with the NUMALatency
// matrix, packages, GPU names/UUIDs from the NVML/CUDA OS devices, and NVLink from the
// NVLinkBandwidth distances matrix (MB/s; 20000 per NVLink 1 link, 25000 per later link).
#include <cstddef>
#include <string>

#include "common/isolated_call.hpp"
#include "probes/topology/nvml_topology.hpp"
#include "model/topology.hpp"

namespace interprobe {

// At most this large; hwloc reads it in a child process (see read_hwloc_xml).
inline constexpr std::size_t kMaxHwlocXmlBytes = std::size_t{64} << 20;

// Fills pci_devices and cpu of `section`; GPU data and NVLinks found go into `gpu_data`
// (source "hwloc_xml"). The file is foreign input: it is read once (regular file or pipe, at
// most kMaxHwlocXmlBytes) and loaded by hwloc only in a child process, within `limits`, which
// sends back what was read from it; a crash, hang or runaway allocation of hwloc on a malformed
// file ends the child and is an InputError naming the file.
// Throws InputError when the file cannot be loaded, UnsupportedError when hwloc is compiled out.
void read_hwloc_xml(const std::string& path, report::TopologySection& section, NvmlTopology& gpu_data,
                    const IsolationLimits& limits = {});

// Links in an NVLinkBandwidth value: 25000 MB/s per link (NVLink 2-4), 20000 for NVLink 1.
int nvlinks_from_bandwidth_mbps(unsigned long long mbps);

}  // namespace interprobe
