#pragma once
// Helpers shared by the topology tests: fixture paths, reading a fixture's topology, and a
// scratch copy of a fixture to mutate.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "probes/common/host_root.hpp"
#include "probes/topology/topology_probe.hpp"
#include "report/model/topology.hpp"

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

// A writable copy of a fixture (symlinks kept as links), removed at scope end.
class TempTree {
 public:
  explicit TempTree(const std::string& fixture) {
    char pattern[] = "/tmp/interprobe-topo-XXXXXX";
    const char* made = ::mkdtemp(pattern);
    if (!made) throw std::runtime_error("mkdtemp failed");
    path_ = made;
    std::filesystem::copy(fixture_dir(fixture), path_,
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  }
  ~TempTree() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path at(const std::string& machine_path) const { return path_ / machine_path.substr(1); }
  // The device directory behind /sys/bus/pci/devices/<bdf>, on this machine.
  std::filesystem::path device(const std::string& bdf) const {
    return std::filesystem::canonical(at("/sys/bus/pci/devices/" + bdf));
  }
  void write(const std::filesystem::path& file, const std::string& content) const {
    std::error_code ec;
    std::filesystem::remove(file, ec);
    std::ofstream(file, std::ios::binary) << content;
  }
  void relink(const std::filesystem::path& link, const std::string& target) const {
    std::error_code ec;
    std::filesystem::remove(link, ec);
    std::filesystem::create_symlink(target, link);
  }

 private:
  std::filesystem::path path_;
};

}  // namespace interprobe::topology_test
