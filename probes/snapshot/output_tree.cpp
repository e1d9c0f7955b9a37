#include "probes/snapshot/output_tree.hpp"
#include "probes/snapshot/archive.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/interrupt.hpp"
#include "common/text.hpp"

namespace interprobe::snapshot {

namespace fs = std::filesystem;

namespace {


std::vector<std::string> components(std::string_view rel) {
  std::vector<std::string> parts;
  for (auto& p : split(rel, '/')) {
    if (p.empty() || p == ".") continue;
    if (p == "..") throw InputError(fmt::format("'{}': '..' in a path written into the snapshot; refused", rel));
    parts.push_back(std::move(p));
  }
  return parts;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

}  // namespace

OutputTree::OutputTree(const fs::path& dir) : dir_(dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw InputError(fmt::format("{}: cannot create the directory ({})", dir.string(), std::strerror(errno)));
  root_ = UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (root_.get() < 0)
    throw InputError(fmt::format("{}: cannot open the directory ({}); it must be a directory, not a link",
                                 dir.string(), std::strerror(errno)));
}

UniqueFd OutputTree::open_parent(std::string_view rel, bool create, std::string* leaf) const {
  auto parts = components(rel);
  if (parts.empty()) throw InputError(fmt::format("{}: empty path written into the snapshot", dir_.string()));
  *leaf = parts.back();
  parts.pop_back();
  UniqueFd current(::dup(root_.get()));
  for (const auto& part : parts) {
    int next = ::openat(current.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && create) {
      if (::mkdirat(current.get(), part.c_str(), 0755) != 0 && errno != EEXIST)
        throw InputError(fmt::format("{}/{}: cannot create directory ({})", dir_.string(), rel, std::strerror(errno)));
      next = ::openat(current.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (next < 0) {
      if (!create && errno == ENOENT) return UniqueFd();
      throw InputError(fmt::format("{}/{}: '{}' on the way is {}; nothing is written through it", dir_.string(), rel,
                                   part, errno == ELOOP || errno == ENOTDIR ? "a link or a file" : std::strerror(errno)));
    }
    current = UniqueFd(next);
  }
  return current;
}

void OutputTree::make_directories(std::string_view rel) {
  if (components(rel).empty()) return;
  std::string leaf;
  // A placeholder last component makes every component of `rel` a directory on the way.
  UniqueFd parent = open_parent(std::string(rel) + "/placeholder", true, &leaf);
}

UniqueFd OutputTree::create_file(std::string_view rel, bool exclusive) {
  throw_if_interrupted();
  std::string leaf;
  UniqueFd parent = open_parent(rel, true, &leaf);
  if (!exclusive) {
    struct stat st {};
    if (::fstatat(parent.get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
      ::unlinkat(parent.get(), leaf.c_str(), 0);
  }
  int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC);
  UniqueFd fd(::openat(parent.get(), leaf.c_str(), flags, 0644));
  if (fd.get() < 0)
    throw InputError(fmt::format("{}/{}: cannot write ({})", dir_.string(), rel, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw InputError(fmt::format("{}/{}: not a regular file; nothing written", dir_.string(), rel));
  return fd;
}

void OutputTree::write_file(std::string_view rel, std::string_view content, bool exclusive) {
  UniqueFd fd = create_file(rel, exclusive);
  while (!content.empty()) {
    ssize_t n = ::write(fd.get(), content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw InputError(fmt::format("{}/{}: write failed ({})", dir_.string(), rel, std::strerror(errno)));
    content.remove_prefix(static_cast<std::size_t>(n));
  }
}

bool OutputTree::make_symlink(std::string_view rel, const std::string& target) {
  throw_if_interrupted();
  std::string leaf;
  UniqueFd parent = open_parent(rel, true, &leaf);
  if (::symlinkat(target.c_str(), parent.get(), leaf.c_str()) == 0) return true;
  if (errno == EEXIST) return false;
  throw InputError(fmt::format("{}/{}: cannot create link ({})", dir_.string(), rel, std::strerror(errno)));
}

bool OutputTree::is_symlink(std::string_view rel) const {
  std::string leaf;
  UniqueFd parent = open_parent(rel, false, &leaf);
  struct stat st {};
  return parent.get() >= 0 && ::fstatat(parent.get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

std::optional<std::string> OutputTree::resolve(std::string_view rel) const {
  std::vector<std::string> pending;
  for (auto& p : split(rel, '/'))
    if (!p.empty() && p != ".") pending.push_back(std::move(p));
  std::vector<std::string> done;
  int hops = 0;
  for (std::size_t i = 0; i < pending.size();) {
    std::string part = pending[i++];
    if (part == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(part);
    std::string current = join(done);
    struct stat st {};
    // Every earlier component of `current` was found to be a directory, not a link.
    if (::fstatat(root_.get(), current.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
    if (S_ISDIR(st.st_mode)) continue;
    if (!S_ISLNK(st.st_mode)) {
      if (i < pending.size()) return std::nullopt;  // a file with more path after it
      continue;
    }
    if (++hops > kMaxLinkHops) return std::nullopt;
    std::vector<char> target(PATH_MAX + 1);
    ssize_t n = ::readlinkat(root_.get(), current.c_str(), target.data(), target.size() - 1);
    if (n < 0) return std::nullopt;
    std::string link(target.data(), static_cast<std::size_t>(n));
    done.pop_back();
    if (!link.empty() && link.front() == '/') done.clear();
    std::vector<std::string> rest(pending.begin() + static_cast<long>(i), pending.end());
    pending.clear();
    for (auto& p : split(link, '/'))
      if (!p.empty() && p != ".") pending.push_back(std::move(p));
    pending.insert(pending.end(), rest.begin(), rest.end());
    i = 0;
  }
  return join(done);
}

std::optional<std::string> OutputTree::read_regular(std::string_view rel, std::size_t max_bytes) const {
  std::string leaf;
  UniqueFd parent;
  try {
    parent = open_parent(rel, false, &leaf);
  } catch (const InputError&) {
    return std::nullopt;
  }
  if (parent.get() < 0) return std::nullopt;
  UniqueFd fd(::openat(parent.get(), leaf.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::string data;
  char buffer[8192];
  while (data.size() <= max_bytes) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return data;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  return std::nullopt;  // larger than asked for
}

}  // namespace interprobe::snapshot
