#include "common/host_root.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/root_fd.hpp"
#include "common/text.hpp"

namespace interprobe {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxSymlinkHops = 40;  // the kernel's own limit (MAXSYMLINKS)

std::deque<std::string> split_components(std::string_view path) {
  std::deque<std::string> parts;
  for (auto& part : split(path, '/')) {
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
  }
  return parts;
}

std::string join_machine(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

ReadFailure failure_from_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return ReadFailure::missing;
    case EACCES:
    case EPERM:
      return ReadFailure::permission_denied;
    case ELOOP:
      return ReadFailure::symlink_loop;
    case EISDIR:
      return ReadFailure::not_a_file;
    default:
      return ReadFailure::io_error;
  }
}

// Reads an open descriptor that must be a regular file, at most `max_bytes`. `trust_size`: a
// tree's files have real sizes (sysfs and procfs report 4096 or 0), so a bigger one is refused
// before reading.
FileRead read_regular_file(int fd, std::size_t max_bytes, bool trust_size) {
  FileRead result;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    result.failure = ReadFailure::not_a_file;
    return result;
  }
  if (trust_size && static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    result.failure = ReadFailure::too_large;
    return result;
  }
  std::string data;
  char buffer[8192];
  while (true) {
    // One byte beyond the cap tells "exactly max_bytes" from "more".
    std::size_t want = std::min(sizeof buffer, max_bytes + 1 - data.size());
    ssize_t n = ::read(fd, buffer, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      result.failure = failure_from_errno(errno);
      return result;
    }
    if (n == 0) break;
    data.append(buffer, static_cast<std::size_t>(n));
    if (data.size() > max_bytes) {
      result.failure = ReadFailure::too_large;
      return result;
    }
  }
  result.content = std::move(data);
  return result;
}

// The snapshot manifest's `unreadable` list, as far as it says how a read failed.
std::shared_ptr<const std::map<std::string, ReadFailure>> parse_recorded_failures(const std::string& text, const fs::path& root) {
  fs::path file = root / std::string(HostRoot::kManifestPath).substr(1);
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("--root {}: {} is not valid JSON ({}); re-take the snapshot or delete the file",
                                 root.string(), file.string(), e.what()));
  }
  auto failures = std::make_shared<std::map<std::string, ReadFailure>>();
  if (!manifest.is_object() || !manifest.contains("unreadable")) return failures;
  const auto& list = manifest["unreadable"];
  if (!list.is_array())
    throw InputError(fmt::format("--root {}: {}: 'unreadable' must be an array", root.string(), file.string()));
  for (const auto& entry : list) {
    if (!entry.is_object() || !entry.contains("path") || !entry["path"].is_string()) continue;
    if (!entry.contains("failure") || !entry["failure"].is_string()) continue;  // not a machine file (cpuid.txt)
    auto failure = failure_from_name(entry["failure"].get<std::string>());
    if (!failure || *failure == ReadFailure::missing) continue;
    (*failures)[entry["path"].get<std::string>()] = *failure;
  }
  return failures;
}

}  // namespace

const char* to_string(ReadFailure failure) {
  switch (failure) {
    case ReadFailure::none: return "ok";
    case ReadFailure::missing: return "missing";
    case ReadFailure::permission_denied: return "permission denied (needs root)";
    case ReadFailure::symlink_loop: return "symlink loop";
    case ReadFailure::not_a_file: return "not a regular file";
    case ReadFailure::too_large: return "too large";
    case ReadFailure::io_error: return "read error";
  }
  return "unknown";
}

const char* failure_name(ReadFailure failure) {
  switch (failure) {
    case ReadFailure::none: return "none";
    case ReadFailure::missing: return "missing";
    case ReadFailure::permission_denied: return "permission_denied";
    case ReadFailure::symlink_loop: return "symlink_loop";
    case ReadFailure::not_a_file: return "not_a_file";
    case ReadFailure::too_large: return "too_large";
    case ReadFailure::io_error: return "io_error";
  }
  return "io_error";
}

std::optional<ReadFailure> failure_from_name(std::string_view name) {
  for (auto f : {ReadFailure::missing, ReadFailure::permission_denied, ReadFailure::symlink_loop, ReadFailure::not_a_file,
                 ReadFailure::too_large, ReadFailure::io_error})
    if (name == failure_name(f)) return f;
  return std::nullopt;
}

struct AccessLog::Impl {
  mutable std::mutex mutex;
  std::set<std::pair<Kind, std::string>> seen;
};

AccessLog::AccessLog() : impl_(std::make_shared<Impl>()) {}

void AccessLog::record(Kind kind, std::string_view machine_path) {
  std::lock_guard lock(impl_->mutex);
  impl_->seen.emplace(kind, std::string(machine_path));
}

std::vector<std::pair<AccessLog::Kind, std::string>> AccessLog::entries() const {
  std::lock_guard lock(impl_->mutex);
  return {impl_->seen.begin(), impl_->seen.end()};
}

HostRoot::HostRoot() : root_("/"), live_(true) {}

HostRoot::HostRoot(const fs::path& root) {
  std::error_code ec;
  if (root.empty()) throw InputError("--root: empty path; give the directory of a machine tree");
  auto status = fs::status(root, ec);
  if (ec || !fs::exists(status)) {
    throw InputError(fmt::format("--root {}: no such directory; give a fixture or snapshot tree", root.string()));
  }
  if (!fs::is_directory(status)) {
    throw InputError(fmt::format("--root {}: not a directory; give a fixture or snapshot tree", root.string()));
  }
  root_ = fs::canonical(root, ec);
  if (ec) throw InputError(fmt::format("--root {}: {}", root.string(), ec.message()));
  live_ = (root_ == fs::path("/"));
  if (live_) return;
  auto fd = std::make_shared<UniqueFd>(::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!*fd) throw InputError(fmt::format("--root {}: cannot open it ({})", root.string(), std::strerror(errno)));
  root_fd_ = std::move(fd);
  // Read like any machine file (inside the root, no escape), before any failure is recorded.
  FileRead manifest = read(kManifestPath, kManifestMaxBytes);
  if (manifest.ok()) recorded_failures_ = parse_recorded_failures(*manifest.content, root_);
  else if (manifest.failure != ReadFailure::missing)
    throw InputError(fmt::format("--root {}: {} cannot be read: {}; fix it (a regular file of at most {} bytes) or delete it",
                                 root_.string(), (root_ / std::string(kManifestPath).substr(1)).string(),
                                 to_string(manifest.failure), kManifestMaxBytes));
}

int HostRoot::descriptor() const { return root_fd_ ? root_fd_->get() : -1; }

std::optional<ReadFailure> HostRoot::recorded_failure(const std::string& machine_path) const {
  if (!recorded_failures_) return std::nullopt;
  auto it = recorded_failures_->find(machine_path);
  if (it == recorded_failures_->end()) return std::nullopt;
  return it->second;
}

UniqueFd HostRoot::open_machine(const std::string& canonical_path, int flags) const {
  std::vector<std::string> parts;
  for (auto& part : split_components(canonical_path)) parts.push_back(std::move(part));
  return open_beneath(root_fd_->get(), parts, flags);
}

// Walks the path one component at a time below a directory descriptor (fstatat/readlinkat on
// it, never a host path string), so a tree changed while we walk cannot send us outside.
ResolvedPath HostRoot::resolve(std::string_view machine_path) const {
  ResolvedPath out;
  if (live_) {
    // The kernel resolves live paths itself; "/.." is "/" there, so nothing can escape.
    out.host_path = fs::path(std::string(machine_path));
    out.machine_path = std::string(machine_path);
    struct stat st {};
    if (::stat(out.host_path.c_str(), &st) == 0) out.mode = st.st_mode;
    return out;
  }
  std::deque<std::string> pending = split_components(machine_path);
  std::vector<std::string> done;
  UniqueFd cursor = open_beneath(root_fd_->get(), {}, O_PATH | O_DIRECTORY);  // the directory `done` names
  out.mode = S_IFDIR;                                                           // the root itself
  auto fail = [&](int err) {
    out.failure = failure_from_errno(err);
    out.mode = 0;
    // Keep the unresolved remainder so callers can still name the path they asked for.
    for (auto& rest : pending) done.push_back(rest);
    pending.clear();
  };
  int hops = 0;
  while (!pending.empty() && cursor) {
    std::string part = std::move(pending.front());
    pending.pop_front();
    if (part == "..") {
      if (done.empty()) {
        throw RootEscapeError(fmt::format(
            "--root {}: path {} climbs above the root; the tree is malformed or hostile", root_.string(),
            std::string(machine_path)));
      }
      done.pop_back();
      cursor = open_beneath(root_fd_->get(), done, O_PATH | O_DIRECTORY);
      if (!cursor) fail(errno);
      continue;
    }
    struct stat st {};
    if (::fstatat(cursor.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      int err = errno;
      done.push_back(part);
      fail(err);
      break;
    }
    if (S_ISLNK(st.st_mode)) {
      if (++hops > kMaxSymlinkHops) {
        done.push_back(part);
        fail(ELOOP);
        break;
      }
      char target[4096];
      ssize_t n = ::readlinkat(cursor.get(), part.c_str(), target, sizeof target);
      if (n < 0 || n == static_cast<ssize_t>(sizeof target)) {
        int err = n < 0 ? errno : ENAMETOOLONG;
        done.push_back(part);
        fail(err);
        break;
      }
      std::string_view link(target, static_cast<std::size_t>(n));
      if (!link.empty() && link.front() == '/') {  // chroot: re-root absolute links
        done.clear();
        cursor = open_beneath(root_fd_->get(), done, O_PATH | O_DIRECTORY);
      }
      auto link_parts = split_components(link);
      pending.insert(pending.begin(), link_parts.begin(), link_parts.end());
      out.mode = S_IFDIR;  // what `done` names again, should the link be "." or "/"
      continue;
    }
    done.push_back(part);
    out.mode = st.st_mode;
    if (pending.empty()) break;
    cursor = UniqueFd(::openat(cursor.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!cursor) fail(errno);
  }
  if (!cursor && out.failure == ReadFailure::none) fail(errno);
  out.machine_path = join_machine(done);
  out.host_path = root_;
  for (const auto& p : done) out.host_path /= p;
  return out;
}

FileRead HostRoot::read(std::string_view machine_path, std::size_t max_bytes) const {
  note(AccessLog::Kind::file, machine_path);
  FileRead result;
  ResolvedPath resolved = resolve(machine_path);
  if (resolved.failure == ReadFailure::missing) {
    if (auto recorded = recorded_failure(resolved.machine_path)) resolved.failure = *recorded;
  }
  if (resolved.failure != ReadFailure::none) {
    result.failure = resolved.failure;
    return result;
  }
  // Regular files only, checked before opening: opening a FIFO blocks, opening a device node
  // can act on the device. O_NONBLOCK and the fstat after opening cover a file swapped since.
  if (resolved.mode != 0 && !S_ISREG(resolved.mode)) {
    result.failure = ReadFailure::not_a_file;
    return result;
  }
  const int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  UniqueFd fd = live_ ? UniqueFd(::open(resolved.host_path.c_str(), flags)) : open_machine(resolved.machine_path, flags);
  if (!fd) {
    result.failure = failure_from_errno(errno);
    return result;
  }
  return read_regular_file(fd.get(), max_bytes, /*trust_size=*/!live_);
}
std::optional<std::string> HostRoot::read_text(std::string_view machine_path) const {
  FileRead r = read(machine_path, kTextMaxBytes);
  if (!r.ok()) return std::nullopt;
  return std::string(trim(*r.content));
}

std::vector<std::string> HostRoot::list(std::string_view machine_path) const {
  note(AccessLog::Kind::directory, machine_path);
  std::vector<std::string> names;
  ResolvedPath resolved = resolve(machine_path);
  if (resolved.failure != ReadFailure::none || !S_ISDIR(resolved.mode)) return names;
  const int flags = O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC;
  UniqueFd fd = live_ ? UniqueFd(::open(resolved.host_path.c_str(), flags)) : open_machine(resolved.machine_path, flags);
  if (!fd) return names;
  DIR* dir = ::fdopendir(fd.get());
  if (!dir) return names;
  fd.release();  // owned by `dir` now
  while (const dirent* entry = ::readdir(dir)) {
    std::string_view name(entry->d_name);
    if (name == "." || name == "..") continue;
    if (names.size() >= kMaxListEntries) break;  // documented cap; a real sysfs directory is far below it
    names.emplace_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

bool HostRoot::exists(std::string_view machine_path) const {
  note(AccessLog::Kind::path, machine_path);
  ResolvedPath resolved = resolve(machine_path);
  if (resolved.failure == ReadFailure::missing) return recorded_failure(resolved.machine_path).has_value();
  if (resolved.failure != ReadFailure::none) return false;
  if (!live_) return true;  // the resolver found every component
  struct stat st {};
  return ::lstat(resolved.host_path.c_str(), &st) == 0 || ::stat(resolved.host_path.c_str(), &st) == 0;
}

bool HostRoot::is_directory(std::string_view machine_path) const {
  note(AccessLog::Kind::path, machine_path);
  ResolvedPath resolved = resolve(machine_path);
  return resolved.failure == ReadFailure::none && S_ISDIR(resolved.mode);
}

std::optional<std::string> HostRoot::canonical(std::string_view machine_path) const {
  note(AccessLog::Kind::path, machine_path);
  if (live_) {
    std::error_code ec;
    auto p = fs::canonical(fs::path(std::string(machine_path)), ec);
    if (ec) return std::nullopt;
    return p.string();
  }
  ResolvedPath resolved = resolve(machine_path);
  if (resolved.failure != ReadFailure::none) return std::nullopt;
  return resolved.machine_path;
}

std::optional<std::string> HostRoot::link_target(std::string_view machine_path) const {
  note(AccessLog::Kind::path, machine_path);
  std::string path(machine_path);
  auto slash = path.find_last_of('/');
  std::string parent = slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
  std::string leaf = slash == std::string::npos ? path : path.substr(slash + 1);
  ResolvedPath dir = resolve(parent);
  if (dir.failure != ReadFailure::none) return std::nullopt;
  UniqueFd fd = live_ ? UniqueFd(::open(dir.host_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC))
                      : open_machine(dir.machine_path, O_PATH | O_DIRECTORY);
  if (!fd) return std::nullopt;
  char buffer[4096];
  ssize_t n = ::readlinkat(fd.get(), leaf.c_str(), buffer, sizeof buffer);
  if (n < 0 || n == static_cast<ssize_t>(sizeof buffer)) return std::nullopt;
  return std::string(buffer, static_cast<std::size_t>(n));
}

}  // namespace interprobe
