#pragma once
// Evidence that a process touched files it must not: an inotify watch on a canary directory
// (opens and reads, which no metadata listing shows), atime as a second signal, and a metadata
// listing of a whole directory to compare before and after (writes, creations, new links).
// Nothing here uses LD_PRELOAD, so the watched program runs exactly as shipped.
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace interprobe::testing {

class CanaryWatch {
 public:
  // Watches `dir`, every directory and every file under it (files too, so an open through a
  // hard link made elsewhere still shows). Also backdates every file's atime below its mtime,
  // so that even a relatime mount records the next read.
  explicit CanaryWatch(const std::filesystem::path& dir);
  ~CanaryWatch();
  CanaryWatch(const CanaryWatch&) = delete;
  CanaryWatch& operator=(const CanaryWatch&) = delete;

  // Every event since construction (or the last call), e.g. "open dmi/product_name",
  // "access cpuinfo", "create dmi/evil"; reads the queue without blocking.
  std::vector<std::string> events();
  // Files whose atime moved since construction ("atime dmi/product_name"); empty on a noatime
  // mount, so it is a second signal only.
  std::vector<std::string> atime_changes() const;

 private:
  std::filesystem::path dir_;
  int fd_ = -1;
  std::map<int, std::string> watched_;  // watch descriptor -> path relative to dir_
  std::map<std::string, timespec> atimes_;
};

// What lstat says about every entry under a directory (links not followed, nothing opened),
// keyed by relative path: type, mode, inode, link count, size, mtime, ctime, link target.
using Listing = std::map<std::string, std::string>;
// `skip`: relative paths listed by kind only: neither their metadata nor their contents.
Listing list_tree(const std::filesystem::path& dir, const std::vector<std::string>& skip = {});
// "changed X: before -> after", "new X", "gone X" for every difference.
std::vector<std::string> diff_listings(const Listing& before, const Listing& after);

}  // namespace interprobe::testing
