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
// check library_unsafe_reason(root) (common/tree_audit.hpp) before loading a tree.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "common/host_root.hpp"

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

// hwloc dlopens every plugin in its plugin directory at the first hwloc_topology_init of a
// process, whatever components are then enabled: on Debian hwloc_gl (libX11, libXNVCtrl),
// hwloc_opencl (libOpenCL), hwloc_pci (libpciaccess) and hwloc_xml_libxml (libxml2, ICU), on
// other builds also cuda, nvml, rsmi, levelzero, which would load vendor libraries behind our
// back. hwloc_topology_set_components() cannot stop that (it filters discovery, after the
// load), and there is no API for the plugin list; an empty HWLOC_PLUGINS_PATH is the allow-list:
// only the built-in components (linux, x86, xml with hwloc's own parser, synthetic, noos) exist.
// Scoped to one topology init, like the rest, so a user's own setting elsewhere is untouched.
class HwlocBuiltinComponentsOnly {
 public:
  HwlocBuiltinComponentsOnly() : plugins_path_("HWLOC_PLUGINS_PATH", "") {}

 private:
  ScopedEnv plugins_path_;
};

class HwlocEnvironment {
 public:
  explicit HwlocEnvironment(const HostRoot& root) : components_("HWLOC_COMPONENTS", root.is_live() ? "-pci" : "-pci,-x86") {
    if (!root.is_live()) {
      fsroot_.emplace("HWLOC_FSROOT", pinned_root(root));
      quiet_.emplace("HWLOC_HIDE_ERRORS", "2");
    }
  }

 private:
  HwlocBuiltinComponentsOnly builtin_only_;
  // The directory HostRoot opened (and the audit walked), not whatever its path names by the
  // time hwloc opens it; the path itself where /proc is not mounted. Our own duplicate of the
  // descriptor, so a HostRoot that goes away first does not leave hwloc a dangling one.
  std::string pinned_root(const HostRoot& root) {
    if (root.descriptor() >= 0) pinned_.fd = ::fcntl(root.descriptor(), F_DUPFD_CLOEXEC, 0);
    std::string via_proc = "/proc/self/fd/" + std::to_string(pinned_.fd);
    struct stat st {};
    if (pinned_.fd >= 0 && ::stat(via_proc.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return via_proc;
    return root.root().string();
  }
  struct PinnedFd {
    int fd = -1;
    ~PinnedFd() {
      if (fd >= 0) ::close(fd);
    }
  };
  PinnedFd pinned_;
  ScopedEnv components_;
  std::optional<ScopedEnv> fsroot_, quiet_;
};

}  // namespace interprobe
