// The hwloc XML export of the machine, so `--hwloc-xml` and lstopo can read a snapshot too.
#include <hwloc.h>

#include <string>

#include "common/hwloc_environment.hpp"
#include "common/hwloc_topology.hpp"
#include "common/tree_audit.hpp"
#include "probes/snapshot/capture.hpp"

namespace interprobe::snapshot {

bool export_hwloc_xml(const HostRoot& root, const std::filesystem::path& file, std::string* why) {
  if (auto unsafe = library_unsafe_reason(root)) {
    *why = library_refusal("hwloc", *unsafe);
    return false;
  }
  HwlocBuiltinComponentsOnly builtin_only;  // before init: that is when hwloc loads its plugins
  HwlocTopology topology;
  if (!topology) {
    *why = "hwloc_topology_init failed";
    return false;
  }
  // I/O devices (PCI, OS devices) are what interprobe cares about; hwloc drops them by default.
  hwloc_topology_set_io_types_filter(topology.get(), HWLOC_TYPE_FILTER_KEEP_ALL);
  bool ok = false;
  {
    HwlocEnvironment environment(root);
    ok = hwloc_topology_load(topology.get()) == 0 && hwloc_topology_export_xml(topology.get(), file.c_str(), 0) == 0;
  }
  if (!ok) *why = "hwloc could not load or export the topology";
  return ok;
}

}  // namespace interprobe::snapshot
