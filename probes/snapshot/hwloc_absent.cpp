#include "probes/snapshot/capture.hpp"

namespace interprobe::snapshot {

bool export_hwloc_xml(const HostRoot&, const std::filesystem::path&, std::string* why) {
  *why = "compiled out: built without hwloc (-DINTERPROBE_WITH_HWLOC=ON to enable)";
  return false;
}

}  // namespace interprobe::snapshot
