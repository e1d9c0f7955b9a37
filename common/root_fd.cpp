#include "common/root_fd.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace interprobe {

namespace {

// -1: not tried yet; 0: the kernel (or a seccomp filter) refuses openat2; 1: works.
std::atomic<int> g_openat2_state{-1};

int try_openat2(int root_fd, const std::string& relative, int flags) {
#ifdef SYS_openat2
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags);
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, root_fd, relative.c_str(), &how, sizeof how));
#else
  (void)root_fd, (void)relative, (void)flags;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

UniqueFd open_beneath_by_walk(int root_fd, const std::vector<std::string>& parts, int flags) {
  flags |= O_NOFOLLOW | O_CLOEXEC;
  if (parts.empty()) return UniqueFd(::openat(root_fd, ".", flags));
  UniqueFd current;
  int dir = root_fd;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    UniqueFd next(::openat(dir, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) return next;
    current = std::move(next);
    dir = current.get();
  }
  return UniqueFd(::openat(dir, parts.back().c_str(), flags));
}

bool openat2_available() {
  if (g_openat2_state.load() < 0) {
    UniqueFd probe(try_openat2(AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    g_openat2_state.store(probe ? 1 : 0);
  }
  return g_openat2_state.load() == 1;
}

UniqueFd open_beneath(int root_fd, const std::vector<std::string>& parts, int flags) {
  flags |= O_NOFOLLOW | O_CLOEXEC;
  if (openat2_available()) {
    std::string relative = ".";
    for (const auto& part : parts) relative += "/" + part;
    return UniqueFd(try_openat2(root_fd, relative, flags));
  }
  return open_beneath_by_walk(root_fd, parts, flags);
}

}  // namespace interprobe
