#include "probes/common/host_root.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "probes/common/errors.hpp"
#include "probes/common/text.hpp"

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
  // Read like any machine file (inside the root, no escape), before any failure is recorded.
  if (FileRead manifest = read(kManifestPath); manifest.ok()) recorded_failures_ = parse_recorded_failures(*manifest.content, root_);
}

std::optional<ReadFailure> HostRoot::recorded_failure(const std::string& machine_path) const {
  if (!recorded_failures_) return std::nullopt;
  auto it = recorded_failures_->find(machine_path);
  if (it == recorded_failures_->end()) return std::nullopt;
  return it->second;
}

ResolvedPath HostRoot::resolve(std::string_view machine_path) const {
  ResolvedPath out;
  if (live_) {
    // The kernel resolves live paths itself; "/.." is "/" there, so nothing can escape.
    out.host_path = fs::path(std::string(machine_path));
    out.machine_path = std::string(machine_path);
    return out;
  }
  std::deque<std::string> pending = split_components(machine_path);
  std::vector<std::string> done;
  int hops = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.front());
    pending.pop_front();
    if (part == "..") {
      if (done.empty()) {
        throw RootEscapeError(fmt::format(
            "--root {}: path {} climbs above the root; the tree is malformed or hostile", root_.string(),
            std::string(machine_path)));
      }
      done.pop_back();
      continue;
    }
    done.push_back(part);
    fs::path host = root_;
    for (const auto& p : done) host /= p;
    struct stat st {};
    if (::lstat(host.c_str(), &st) != 0) {
      out.failure = failure_from_errno(errno);
      // Keep the unresolved remainder so callers can still name the path they asked for.
      for (auto& rest : pending) done.push_back(rest);
      break;
    }
    if (S_ISLNK(st.st_mode)) {
      if (++hops > kMaxSymlinkHops) {
        out.failure = ReadFailure::symlink_loop;
        break;
      }
      std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
      ssize_t n = ::readlink(host.c_str(), target.data(), target.size());
      if (n < 0) {
        out.failure = failure_from_errno(errno);
        break;
      }
      target.resize(static_cast<std::size_t>(n));
      done.pop_back();
      if (!target.empty() && target.front() == '/') done.clear();  // chroot: re-root absolute links
      auto link_parts = split_components(target);
      pending.insert(pending.begin(), link_parts.begin(), link_parts.end());
    }
  }
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
  // O_NOFOLLOW: every link was resolved above, so a link here is a race we refuse to follow.
  int flags = O_RDONLY | O_CLOEXEC | (live_ ? 0 : O_NOFOLLOW);
  int fd = ::open(resolved.host_path.c_str(), flags);
  if (fd < 0) {
    result.failure = failure_from_errno(errno);
    return result;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    result.failure = ReadFailure::not_a_file;
    return result;
  }
  std::string data;
  char buffer[8192];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      result.failure = failure_from_errno(errno);
      ::close(fd);
      return result;
    }
    if (n == 0) break;
    data.append(buffer, static_cast<std::size_t>(n));
    if (data.size() > max_bytes) {
      ::close(fd);
      result.failure = ReadFailure::too_large;
      return result;
    }
  }
  ::close(fd);
  result.content = std::move(data);
  return result;
}

std::optional<std::string> HostRoot::read_text(std::string_view machine_path) const {
  FileRead r = read(machine_path);
  if (!r.ok()) return std::nullopt;
  return std::string(trim(*r.content));
}

std::vector<std::string> HostRoot::list(std::string_view machine_path) const {
  note(AccessLog::Kind::directory, machine_path);
  std::vector<std::string> names;
  ResolvedPath resolved = resolve(machine_path);
  if (resolved.failure != ReadFailure::none) return names;
  std::error_code ec;
  fs::directory_iterator it(resolved.host_path, ec);
  if (ec) return names;
  for (const auto& entry : it) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool HostRoot::exists(std::string_view machine_path) const {
  note(AccessLog::Kind::path, machine_path);
  ResolvedPath resolved = resolve(machine_path);
  if (resolved.failure == ReadFailure::missing) return recorded_failure(resolved.machine_path).has_value();
  if (resolved.failure != ReadFailure::none) return false;
  struct stat st {};
  return ::lstat(resolved.host_path.c_str(), &st) == 0 || ::stat(resolved.host_path.c_str(), &st) == 0;
}

bool HostRoot::is_directory(std::string_view machine_path) const {
  note(AccessLog::Kind::path, machine_path);
  ResolvedPath resolved = resolve(machine_path);
  if (resolved.failure != ReadFailure::none) return false;
  struct stat st {};
  return ::stat(resolved.host_path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
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
  fs::path host = dir.host_path / leaf;
  char buffer[4096];
  ssize_t n = ::readlink(host.c_str(), buffer, sizeof buffer - 1);
  if (n < 0) return std::nullopt;
  return std::string(buffer, static_cast<std::size_t>(n));
}

}  // namespace interprobe
