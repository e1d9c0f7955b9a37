#pragma once
// `topo --nccl-topo FILE`: an NCCL topology file (NCCL_TOPO_FILE) for a guest whose virtual PCIe
// tree misleads NCCL: GPUs flat under the root complex (NCCL sees PHB and keeps P2P off),
// emulated root ports slower than the GPUs' own links (NCCL prices the slower one), NUMA hidden.
// The file puts the GPUs of each NUMA node under one invented PCIe switch, as the files published
// for Azure's ND VMs do, at the link rate the GPUs really have, with the CPU affinity the operator
// states. It is written in the subset of XML that NCCL's own loader (src/graph/xml.cc) reads:
// docs/reference.md §13 has the rules and their source.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/topology.hpp"

namespace interprobe::render {

// GPUs (by index) that sit in one NUMA node, with that node's CPUs: `--nccl-numa 1=4-7@24-47`.
struct NcclNumaSplit {
  std::int64_t numa_id = 0;
  std::set<std::int64_t> gpu_indices;
  std::set<int> cpus;
};

// What the operator states that the guest cannot see.
struct NcclTopologyFacts {
  std::optional<double> link_gts;          // --nccl-link-speed: the GPUs' real PCIe rate
  std::optional<std::int64_t> link_width;  // --nccl-link-width: lanes
  std::vector<NcclNumaSplit> numa;         // --nccl-numa, empty: what the guest shows
  std::map<std::int64_t, std::set<int>> probed_numa_cpus;  // the guest's NUMA nodes and CPUs
  std::set<int> all_cpus;                  // every CPU of the guest (affinity when NUMA is hidden)
  std::string arch = "x86_64";             // x86_64 | arm64 | ppc64 (NCCL's names)
  std::optional<std::string> cpu_vendor;   // GenuineIntel | AuthenticAMD, when known
};

struct NcclTopologyFile {
  std::string xml;
  std::vector<std::string> changes;  // what NCCL sees differently with the file ("PHB -> PIX")
  std::vector<std::string> notes;    // how to use and verify it, what it cannot do
};

// The PCIe rates NCCL's loader knows (GT/s); anything else would silently read as Gen3.
bool nccl_known_link_gts(double gts);
// The sysfs spelling of a rate that every NCCL version matches ("32 GT/s"; Gen6 only exists in
// the newer "64.0 GT/s PCIe" form).
std::string nccl_link_speed_string(double gts);
// "0000:ff,ffffffff" style cpumap (32-bit hex words, highest first) of a CPU set: the affinity
// format NCCL reads (a CPU list such as "0-23" reads as empty).
std::string cpumap_string(const std::set<int>& cpus);

// Throws InputError naming the option when the facts contradict the topology (an unknown GPU
// index, a GPU in two NUMA splits, a GPU under a real PCIe switch, a bus address NCCL cannot
// match, no GPU at all).
NcclTopologyFile nccl_topology_file(const report::TopologySection& topology, const NcclTopologyFacts& facts);

}  // namespace interprobe::render
