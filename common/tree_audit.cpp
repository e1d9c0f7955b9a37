#include "common/tree_audit.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/root_fd.hpp"

namespace interprobe {

namespace {

class Audit {
 public:
  explicit Audit(const HostRoot& root) : root_(root) {}

  // Walks the directory open at `dir_fd` (machine path `dir`); false stops the walk.
  bool walk(UniqueFd dir_fd, const std::string& dir, int depth) {
    if (depth > kAuditMaxDepth) return refuse(fmt::format("{} is more than {} directories deep", dir, kAuditMaxDepth));
    if (!stable(dir_fd.get(), dir)) return false;
    DIR* stream = ::fdopendir(dir_fd.get());
    if (!stream) return refuse(fmt::format("{} cannot be listed", dir));
    int fd = dir_fd.release();  // owned by `stream` now
    bool ok = true;
    while (ok) {
      const dirent* entry = ::readdir(stream);
      if (!entry) break;
      std::string name(entry->d_name);
      if (name == "." || name == "..") continue;
      if (++entries_ > kAuditMaxEntries) {
        ok = refuse(fmt::format("more than {} entries to check", kAuditMaxEntries));
        break;
      }
      ok = check(fd, dir == "/" ? "/" + name : dir + "/" + name, name, depth);
    }
    ::closedir(stream);
    return ok;
  }

  const std::optional<std::string>& reason() const { return reason_; }

 private:
  bool check(int parent_fd, const std::string& path, const std::string& name, int depth) {
    struct stat st {};
    if (::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return true;  // gone meanwhile
    if (S_ISDIR(st.st_mode)) {
      UniqueFd child(::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
      if (!child) return true;  // unreadable: the library cannot read it either
      return walk(std::move(child), path, depth + 1);
    }
    if (S_ISREG(st.st_mode)) {
      if (static_cast<std::uint64_t>(st.st_size) > HostRoot::kDefaultMaxBytes)
        return refuse(fmt::format("{} is larger than {} bytes", path, HostRoot::kDefaultMaxBytes));
      return true;
    }
    if (S_ISLNK(st.st_mode)) return check_link(parent_fd, path, name);
    const char* kind = S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) ? "a character device"
                       : S_ISBLK(st.st_mode) ? "a block device" : S_ISSOCK(st.st_mode) ? "a socket" : "a special file";
    return refuse(fmt::format("{} is {}", path, kind));
  }

  bool check_link(int parent_fd, const std::string& path, const std::string& name) {
    char target[4096];
    ssize_t n = ::readlinkat(parent_fd, name.c_str(), target, sizeof target);
    if (n < 0) return true;
    std::string link(target, static_cast<std::size_t>(n));
    if (!link.empty() && link.front() == '/')
      return refuse(fmt::format("{} is an absolute symlink to {} (the kernel follows it out of the tree)", path, link));
    // A relative link is the same inside and outside a chroot unless its ".." climb above the
    // top; HostRoot's resolver follows it physically, like the kernel, and says so.
    try {
      (void)root_.resolve(path);
    } catch (const RootEscapeError&) {
      return refuse(fmt::format("{} is a symlink to {} that climbs out of the tree", path, link));
    }
    return true;
  }

  // The walk and hwloc's own reads are not one atomic step: only a tree that no one but us and
  // root can change meanwhile is a tree the audit speaks for.
  bool stable(int dir_fd, const std::string& dir) {
    struct stat st {};
    if (::fstat(dir_fd, &st) != 0) return refuse(fmt::format("{} cannot be examined", dir));
    if (st.st_uid != ::geteuid() && st.st_uid != 0)
      return refuse(fmt::format("{} belongs to uid {}, who could change it while hwloc reads it", dir, st.st_uid));
    if (st.st_mode & S_IWOTH) return refuse(fmt::format("{} is writable by everyone", dir));
    return true;
  }

  bool refuse(std::string why) {
    reason_ = std::move(why);
    return false;
  }

  const HostRoot& root_;
  std::optional<std::string> reason_;
  std::size_t entries_ = 0;
};

}  // namespace

std::optional<std::string> library_unsafe_reason(const HostRoot& root) {
  if (root.is_live()) return std::nullopt;
  UniqueFd top(::open(root.root().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!top) return fmt::format("{} cannot be opened", root.root().string());
  Audit audit(root);
  audit.walk(std::move(top), "/", 0);
  return audit.reason();
}

std::string library_refusal(const char* library, const std::string& reason) {
  return fmt::format("{} was not given the --root tree, because {}; read from the tree by interprobe instead",
                     library, reason);
}

}  // namespace interprobe
