#include "support/canary_watch.hpp"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>

namespace interprobe::testing {

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t kWatchMask = IN_OPEN | IN_ACCESS | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE |
                                     IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_MOVED_FROM | IN_MOVED_TO;

std::string event_name(std::uint32_t mask) {
  static const std::pair<std::uint32_t, const char*> names[] = {
      {IN_OPEN, "open"},          {IN_ACCESS, "access"},           {IN_MODIFY, "modify"},
      {IN_ATTRIB, "attrib"},      {IN_CLOSE_WRITE, "close_write"}, {IN_CREATE, "create"},
      {IN_DELETE, "delete"},      {IN_DELETE_SELF, "delete_self"}, {IN_MOVE_SELF, "move_self"},
      {IN_MOVED_FROM, "moved_from"}, {IN_MOVED_TO, "moved_to"},    {IN_Q_OVERFLOW, "queue_overflow"}};
  std::string out;
  for (const auto& [bit, name] : names)
    if (mask & bit) out += (out.empty() ? "" : "|") + std::string(name);
  return out.empty() ? "event" : out;
}

std::string relative_name(const fs::path& dir, const fs::path& p) {
  auto rel = p.lexically_relative(dir).string();
  return rel.empty() || rel == "." ? "." : rel;
}

}  // namespace

CanaryWatch::CanaryWatch(const fs::path& dir) : dir_(dir) {
  fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error(std::string("inotify_init1: ") + std::strerror(errno));
  std::vector<fs::path> paths{dir};
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it)
    paths.push_back(it->path());
  for (const auto& p : paths) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
    if (S_ISREG(st.st_mode)) {
      // atime older than mtime: relatime updates it on the next read.
      timespec times[2] = {{st.st_mtim.tv_sec - 86400 * 2, 0}, {0, UTIME_OMIT}};
      ::utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW);
      ::lstat(p.c_str(), &st);
      atimes_[relative_name(dir, p)] = st.st_atim;
    }
    int wd = ::inotify_add_watch(fd_, p.c_str(), kWatchMask | IN_DONT_FOLLOW);
    if (wd < 0) throw std::runtime_error("inotify_add_watch " + p.string() + ": " + std::strerror(errno));
    watched_[wd] = relative_name(dir, p);
  }
}

CanaryWatch::~CanaryWatch() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<std::string> CanaryWatch::events() {
  std::set<std::string> seen;  // a file's own watch and its directory's report the same open
  std::vector<std::string> out;
  alignas(inotify_event) char buffer[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n <= 0) break;
    for (ssize_t at = 0; at < n;) {
      auto* e = reinterpret_cast<const inotify_event*>(buffer + at);
      at += sizeof(inotify_event) + e->len;
      if (e->mask & IN_IGNORED) continue;
      std::string where = watched_.count(e->wd) ? watched_[e->wd] : "?";
      if (e->len > 0 && e->name[0]) where = where == "." ? std::string(e->name) : where + "/" + e->name;
      // Opening a watched directory itself (a listing) is reported with IN_ISDIR.
      std::string line = event_name(e->mask) + " " + where + ((e->mask & IN_ISDIR) ? "/" : "");
      if (seen.insert(line).second) out.push_back(line);
    }
  }
  return out;
}

std::vector<std::string> CanaryWatch::atime_changes() const {
  std::vector<std::string> out;
  for (const auto& [rel, before] : atimes_) {
    struct stat st {};
    if (::lstat((dir_ / rel).c_str(), &st) != 0) continue;  // gone: the listing says so
    if (st.st_atim.tv_sec != before.tv_sec || st.st_atim.tv_nsec != before.tv_nsec) out.push_back("atime " + rel);
  }
  return out;
}

Listing list_tree(const fs::path& dir, const std::vector<std::string>& skip) {
  Listing listing;
  std::vector<fs::path> stack{dir};
  while (!stack.empty()) {
    fs::path current = stack.back();
    stack.pop_back();
    struct stat st {};
    std::string rel = relative_name(dir, current);
    if (::lstat(current.c_str(), &st) != 0) {
      listing[rel] = std::string("lstat failed: ") + std::strerror(errno);
      continue;
    }
    std::string kind = S_ISDIR(st.st_mode)    ? "dir"
                       : S_ISREG(st.st_mode)  ? "file"
                       : S_ISLNK(st.st_mode)  ? "link"
                       : S_ISFIFO(st.st_mode) ? "fifo"
                       : S_ISCHR(st.st_mode)  ? "chr"
                       : S_ISBLK(st.st_mode)  ? "blk"
                                              : "other";
    std::string line = kind + " mode=" + std::to_string(st.st_mode & 07777) + " ino=" + std::to_string(st.st_ino) +
                       " nlink=" + std::to_string(st.st_nlink) + " size=" + std::to_string(st.st_size) +
                       " mtime=" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) +
                       " ctime=" + std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      line += " -> " + fs::read_symlink(current, ec).string();
    }
    if (std::find(skip.begin(), skip.end(), rel) != skip.end()) {
      listing[rel] = kind + " (not compared)";
      continue;
    }
    listing[rel] = line;
    if (!S_ISDIR(st.st_mode)) continue;
    std::error_code ec;
    for (fs::directory_iterator it(current, ec), end; !ec && it != end; it.increment(ec)) stack.push_back(it->path());
  }
  return listing;
}

std::vector<std::string> diff_listings(const Listing& before, const Listing& after) {
  std::vector<std::string> out;
  for (const auto& [path, was] : before) {
    auto now = after.find(path);
    if (now == after.end()) out.push_back("gone " + path);
    else if (now->second != was) out.push_back("changed " + path + ": " + was + " -> " + now->second);
  }
  for (const auto& [path, is] : after)
    if (!before.count(path)) out.push_back("new " + path + ": " + is);
  return out;
}

}  // namespace interprobe::testing
