#pragma once
// hwloc 2 has no API for a file-system root or for choosing components: it reads environment
// variables when a topology loads. HwlocEnvironment sets them for one load and restores the
// old values, so every hwloc user reads the same root the same way:
//  - HWLOC_FSROOT = the --root tree (not set on the live machine);
//  - HWLOC_COMPONENTS without "pci": libpciaccess reads the live bus whatever the root, and
//    leaks its name table at every load; hwloc's Linux backend finds PCI in sysfs anyway;
//    without "x86" on a replayed tree: it would run CPUID on this machine's CPUs;
//  - HWLOC_HIDE_ERRORS on a replayed tree: a partial tree is expected and reported by us.
// hwloc follows the tree's links with the kernel's rules (an absolute link leads to the host):
// check library_unsafe_reason(root) (probes/common/tree_audit.hpp) before loading a tree.
#include <cstdlib>
#include <optional>
#include <string>

#include "probes/common/host_root.hpp"

namespace interprobe {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class HwlocEnvironment {
 public:
  explicit HwlocEnvironment(const HostRoot& root) : components_("HWLOC_COMPONENTS", root.is_live() ? "-pci" : "-pci,-x86") {
    if (!root.is_live()) {
      fsroot_.emplace("HWLOC_FSROOT", root.root().string());
      quiet_.emplace("HWLOC_HIDE_ERRORS", "2");
    }
  }

 private:
  ScopedEnv components_;
  std::optional<ScopedEnv> fsroot_, quiet_;
};

}  // namespace interprobe
