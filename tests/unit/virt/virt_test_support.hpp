#pragma once
// Helpers shared by the virtualization tests: run the probe on a fixture tree, copy a fixture
// to a scratch directory to change it, and print the evidence when an assertion fails.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "probes/common/cpuid.hpp"
#include "probes/common/errors.hpp"
#include "probes/common/host_root.hpp"
#include "probes/virt/virt_probe.hpp"

namespace interprobe::testing_support {

inline std::filesystem::path fixture_dir(const std::string& name) {
  return std::filesystem::path(INTERPROBE_FIXTURES) / "virt" / name;
}

// As cli/session.cpp does: a malformed cpuid.txt becomes an unknown source with a warning origin.
inline std::unique_ptr<CpuidSource> lenient_cpuid(const HostRoot& root) {
  try {
    return make_cpuid_source(root);
  } catch (const InputError& e) {
    return std::make_unique<RecordedCpuid>(RecordedCpuid::unknown(std::string("warning: ") + e.what()));
  }
}

inline report::VirtSection detect_tree(const std::filesystem::path& dir) {
  HostRoot root(dir);
  auto cpuid = lenient_cpuid(root);
  return detect_virtualization(root, *cpuid);
}

inline report::VirtSection detect_fixture(const std::string& name) { return detect_tree(fixture_dir(name)); }

inline std::string dump_evidence(const report::VirtSection& v) {
  std::string out = "evidence:\n";
  for (const auto& e : v.evidence) out += "  " + e.source + " [" + e.family + "] " + e.value + " -> " + e.implies + "\n";
  for (const auto& c : v.conflicts) out += "  conflict: " + c + "\n";
  return out;
}

// A writable copy of a fixture (symlinks kept as links), removed at scope end.
class TempTree {
 public:
  explicit TempTree(const std::string& fixture) {
    char pattern[] = "/tmp/interprobe-virt-XXXXXX";
    const char* made = ::mkdtemp(pattern);
    if (!made) throw std::runtime_error("mkdtemp failed");
    path_ = made;
    std::filesystem::permissions(path_, std::filesystem::perms(0755));
    if (!fixture.empty())
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
  void remove(const std::string& rel) { std::filesystem::remove(path_ / rel); }
  void write(const std::string& rel, const std::string& content) {
    auto full = path_ / rel;
    std::filesystem::create_directories(full.parent_path());
    std::ofstream(full, std::ios::binary) << content;
  }
  void chmod(const std::string& rel, unsigned mode) {
    std::filesystem::permissions(path_ / rel, std::filesystem::perms(mode));
  }

 private:
  std::filesystem::path path_;
};

}  // namespace interprobe::testing_support
