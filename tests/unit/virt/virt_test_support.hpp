#pragma once
// Helpers shared by the virtualization tests: run the probe on a fixture tree, copy a fixture
// to a scratch directory to change it, and print the evidence when an assertion fails.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/cpuid.hpp"
#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "support/temp_tree.hpp"
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

// A writable copy of a virtualization fixture; "" for an empty tree.
class TempTree : public interprobe::testing::TempTree {
 public:
  explicit TempTree(const std::string& fixture)
      : interprobe::testing::TempTree(fixture.empty() ? std::filesystem::path() : fixture_dir(fixture)) {}
};

}  // namespace interprobe::testing_support
