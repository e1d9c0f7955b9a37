// CPU packages through hwloc, pointed at the same root as every other read.
#include <string>

#include "interprobe/build_config.hpp"
#include "common/host_root.hpp"
#include "common/hwloc_environment.hpp"
#include "common/text.hpp"
#include "common/tree_audit.hpp"
#include "probes/topology/cpu_numa.hpp"

#if INTERPROBE_HAVE_HWLOC
#include <hwloc.h>

#include "common/hwloc_topology.hpp"
#endif

namespace interprobe {

#if INTERPROBE_HAVE_HWLOC

bool read_packages_with_hwloc(const HostRoot& root, report::CpuTopology& cpu, std::string* reason) {
  if (!root.is_directory("/sys/devices/system/cpu")) {
    *reason = "no /sys/devices/system/cpu under the root";
    return false;
  }
  if (auto unsafe = library_unsafe_reason(root)) {
    *reason = library_refusal("hwloc", *unsafe);
    return false;
  }
  HwlocEnvironment environment(root);
  HwlocTopology topo;
  if (!topo) {
    *reason = "hwloc_topology_init failed";
    return false;
  }
  // Only packages and cores are wanted: PCI comes from our inventory, NUMA distances from sysfs.
  hwloc_topology_set_io_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_cache_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_icache_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_NONE);
#ifdef HWLOC_TOPOLOGY_FLAG_NO_CPUKINDS
  hwloc_topology_set_flags(topo.get(), HWLOC_TOPOLOGY_FLAG_NO_DISTANCES | HWLOC_TOPOLOGY_FLAG_NO_MEMATTRS | HWLOC_TOPOLOGY_FLAG_NO_CPUKINDS);
#endif
  if (hwloc_topology_load(topo.get()) != 0) {
    *reason = "hwloc could not load the topology of " + root.root().string();
    return false;
  }
  int packages = hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_PACKAGE);
  if (packages <= 0) {
    *reason = "hwloc found no CPU package";
    return false;
  }
  cpu.packages.clear();
  for (int i = 0; i < packages; ++i) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(topo.get(), HWLOC_OBJ_PACKAGE, static_cast<unsigned>(i));
    if (!obj) continue;
    report::CpuPackage package;
    package.id = obj->os_index == HWLOC_UNKNOWN_INDEX ? i : static_cast<int>(obj->os_index);
    if (obj->cpuset) package.cpus = cpulist_of(obj->cpuset);
    if (const char* model = hwloc_obj_get_info_by_name(obj, "CPUModel")) package.model = std::string(trim(model));
    cpu.packages.push_back(std::move(package));
  }
  int cores = hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_CORE);
  if (cores > 0) cpu.cores = cores;
  cpu.packages_source = report::PackagesSource::hwloc;
  return true;
}

#else

bool read_packages_with_hwloc(const HostRoot&, report::CpuTopology&, std::string* reason) {
  *reason = "compiled out: hwloc; rebuild with -DINTERPROBE_WITH_HWLOC=ON (packages read from sysfs instead)";
  return false;
}

#endif

}  // namespace interprobe
