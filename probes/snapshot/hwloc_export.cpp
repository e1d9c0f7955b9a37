// The hwloc XML export of the machine, so `--hwloc-xml` and lstopo can read a snapshot too.
#include <hwloc.h>

#include <cstdlib>
#include <string>

#include "probes/snapshot/capture.hpp"

namespace interprobe::snapshot {

bool export_hwloc_xml(const HostRoot& root, const std::filesystem::path& file, std::string* why) {
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) != 0) {
    *why = "hwloc_topology_init failed";
    return false;
  }
  // I/O devices (PCI, OS devices) are what interprobe cares about; hwloc drops them by default.
  hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_ALL);
  // hwloc 2 has no API for the file-system root; its Linux backend reads HWLOC_FSROOT at load.
  if (!root.is_live()) ::setenv("HWLOC_FSROOT", root.root().c_str(), 1);
  ::setenv("HWLOC_HIDE_ERRORS", "1", 0);  // a partial tree is expected; the manifest says what is missing
  bool ok = hwloc_topology_load(topology) == 0 && hwloc_topology_export_xml(topology, file.c_str(), 0) == 0;
  if (!root.is_live()) ::unsetenv("HWLOC_FSROOT");
  if (!ok) *why = "hwloc could not load or export the topology";
  hwloc_topology_destroy(topology);
  return ok;
}

}  // namespace interprobe::snapshot
