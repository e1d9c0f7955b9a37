#pragma once
// The one owner of an hwloc topology (init in the constructor, destroy in the destructor), for
// the sources that talk to hwloc; only they include this header, so hwloc.h stays out of every
// probe and report interface. Construct it after HwlocBuiltinComponentsOnly where that is used:
// hwloc picks its components at init.
#include <hwloc.h>

#include <cstdlib>
#include <string>

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

// "0-31,64-95": a CPU set as hwloc (and the kernel's cpulist files) write it; empty for none.
inline std::string cpulist_of(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  if (!set || hwloc_bitmap_list_asprintf(&text, set) < 0 || !text) return {};
  std::string out(text);
  std::free(text);
  return out;
}

}  // namespace interprobe
