#pragma once
// Helpers shared by the topology tests: fixture paths, reading a fixture's topology, and a
// scratch copy of a fixture to mutate.
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "common/host_root.hpp"
#include "support/temp_tree.hpp"
#include "probes/topology/topology_probe.hpp"
#include "model/topology.hpp"

namespace interprobe::topology_test {

inline std::filesystem::path fixture_dir(const std::string& name) {
  return std::filesystem::path(INTERPROBE_FIXTURES) / "topology" / name;
}

inline report::TopologySection read_tree(const std::filesystem::path& dir, TopologyOptions options = {}) {
  HostRoot root(dir);
  report::TopologySection s;
  read_topology(root, options, s);
  return s;
}

inline report::TopologySection read_fixture(const std::string& name) { return read_tree(fixture_dir(name)); }

inline const report::GpuPair* pair_of(const report::TopologySection& s, int a, int b) {
  for (const auto& p : s.gpu_pairs)
    if ((p.a_index == a && p.b_index == b) || (p.a_index == b && p.b_index == a)) return &p;
  return nullptr;
}

// A writable copy of a topology fixture.
class TempTree : public interprobe::testing::TempTree {
 public:
  explicit TempTree(const std::string& fixture) : interprobe::testing::TempTree(fixture_dir(fixture)) {}
};

}  // namespace interprobe::topology_test
