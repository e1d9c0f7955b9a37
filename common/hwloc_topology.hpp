#pragma once
// The one owner of an hwloc topology (init in the constructor, destroy in the destructor), for
// the sources that talk to hwloc; only they include this header, so hwloc.h stays out of every
// probe and report interface. Construct it after HwlocBuiltinComponentsOnly where that is used:
// hwloc picks its components at init.
#include <hwloc.h>

namespace interprobe {

class HwlocTopology {
 public:
  HwlocTopology() {
    if (hwloc_topology_init(&topology_) != 0) topology_ = nullptr;
  }
  ~HwlocTopology() {
    if (topology_) hwloc_topology_destroy(topology_);
  }
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;

  // False when hwloc_topology_init failed.
  explicit operator bool() const { return topology_ != nullptr; }
  hwloc_topology_t get() const { return topology_; }

 private:
  hwloc_topology_t topology_ = nullptr;
};

}  // namespace interprobe
