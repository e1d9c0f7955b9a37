#pragma once
// CPUs and NUMA nodes: nodes with their CPUs, memory and SLIT distances from
// /sys/devices/system/node; packages (sockets) through hwloc pointed at the same root, or from
// /sys/devices/system/cpu/cpu*/topology when hwloc is compiled out or fails.
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/topology.hpp"

namespace interprobe {

class HostRoot;

report::CpuTopology read_cpu_topology(const HostRoot& root, std::vector<std::string>& warnings);

// Packages through hwloc (HWLOC_FSROOT at the root); nullopt with `reason` when hwloc is compiled
// out or cannot load the root. Fills packages and cores.
bool read_packages_with_hwloc(const HostRoot& root, report::CpuTopology& cpu, std::string* reason);

// "0-3,8,10-11" <-> {0,1,2,3,8,10,11}; nullopt on garbage or a CPU at or beyond the limit of
// 65536 (Linux's NR_CPUS is at most 8192), with the reason in `why`. Linear in text and CPUs.
std::optional<std::set<int>> parse_cpulist(std::string_view text, std::string* why = nullptr);
std::string format_cpulist(const std::set<int>& cpus);

// Links packages to the NUMA nodes whose CPUs they hold.
void attach_numa_nodes_to_packages(report::CpuTopology& cpu);

}  // namespace interprobe
