#pragma once
// File descriptors below a --root directory that cannot leave it, even when the tree changes
// while we read it (a directory swapped for a symlink between resolving and opening).
// HostRoot resolves symlinks itself (chroot rules, escapes are errors) and then opens the
// link-free result through open_beneath, which never follows a link.
#include <string>
#include <vector>

#include "common/unique_fd.hpp"

namespace interprobe {

// Opens `parts` (path components below `root_fd`: no "", "." or ".." and no symlink expected)
// with `flags` (O_NOFOLLOW and O_CLOEXEC are added). A symlink anywhere on the way fails with
// ELOOP (or ENOTDIR) instead of being followed. Linux >= 5.6: one openat2(RESOLVE_IN_ROOT |
// RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS); older kernels (or a seccomp filter refusing
// openat2): one openat(O_NOFOLLOW) per component. Invalid fd with errno set on failure.
UniqueFd open_beneath(int root_fd, const std::vector<std::string>& parts, int flags);

// The fallback alone (tests use it to cover kernels without openat2).
UniqueFd open_beneath_by_walk(int root_fd, const std::vector<std::string>& parts, int flags);

// Whether open_beneath uses openat2 on this kernel (for tests and --version style reporting).
bool openat2_available();

}  // namespace interprobe
