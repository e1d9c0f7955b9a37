#pragma once
// hwloc (HWLOC_FSROOT) and libpci (sysfs.path) open the files of a --root tree themselves, with
// the kernel's rules: an absolute symlink leads to the host's file, a ".." link climbs out of
// the tree, a FIFO blocks, a device node is read forever. HostRoot's own reads refuse all of
// that; a library cannot be told to. So a tree is handed to them only when nothing in it would
// let them out or stall them; otherwise the caller falls back to our own sysfs readers and
// says so in the report.
#include <cstddef>
#include <optional>
#include <string>

namespace interprobe {

class HostRoot;

// Caps on the walk: a tree beyond them is not audited and so not handed to a library.
inline constexpr std::size_t kAuditMaxEntries = 500'000;
inline constexpr int kAuditMaxDepth = 64;

// nullopt when every entry of the tree is a directory, a regular file of at most
// HostRoot::kDefaultMaxBytes, or a relative symlink that resolves inside the tree, and every
// directory belongs to us or root and is not world-writable (so nobody else can change the tree
// between this walk and the library's reads); otherwise why not, naming the first offending
// entry. The live machine ("/") is always fine.
std::optional<std::string> library_unsafe_reason(const HostRoot& root);

// The report line for a library that was not given the tree.
std::string library_refusal(const char* library, const std::string& reason);

}  // namespace interprobe
