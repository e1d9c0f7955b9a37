#include "common/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "common/errors.hpp"

namespace interprobe {

namespace fs = std::filesystem;

namespace {

std::string label(const std::string& option, const fs::path& path) {
  return option.empty() ? path.string() : fmt::format("{} {}", option, path.string());
}

fs::path directory_of(const fs::path& path) { return path.has_parent_path() ? path.parent_path() : fs::path("."); }

// The mode a plain open(O_CREAT, 0644) would give: mkstemp makes 0600.
mode_t file_mode() {
  static const mode_t mask = [] {
    mode_t m = ::umask(022);
    ::umask(m);
    return m;
  }();
  return 0644 & ~mask;
}

// What lstat found at the target, as a refusal; empty when the target may be written.
std::string refusal(const fs::path& path, ExistingOutput existing) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return fmt::format("cannot check the path ({})", std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return "is a directory; give a file name";
  if (S_ISLNK(st.st_mode))
    return "is a symbolic link; refused so that nothing is written where it points; give the real path";
  if (!S_ISREG(st.st_mode)) return "is a device, FIFO or socket, not a regular file; refused; give a file path";
  if (existing == ExistingOutput::refuse) return "exists; choose a new name, or add --force to replace it";
  return {};
}

}  // namespace

void check_output_target(const fs::path& path, const std::string& option, ExistingOutput existing) {
  if (path.empty()) throw InputError(fmt::format("{} '': empty file name; give the path of the file to write", option));
  auto name = path.filename().string();
  if (name.empty() || name == "." || name == "..")
    throw InputError(fmt::format("{}: is a directory; give a file name", label(option, path)));
  fs::path dir = directory_of(path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InputError(fmt::format("{}: directory {} does not exist; create it or choose another path", label(option, path),
                                 dir.string()));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError(fmt::format("{}: directory {} is not writable; choose another path", label(option, path), dir.string()));
  if (auto why = refusal(path, existing); !why.empty()) throw InputError(fmt::format("{}: {}", label(option, path), why));
}

AtomicOutputFile::AtomicOutputFile(fs::path path, std::string option, ExistingOutput existing)
    : path_(std::move(path)), option_(std::move(option)), existing_(existing) {
  check_output_target(path_, option_, existing_);
  std::string temp = (directory_of(path_) / (std::string(kTempPrefix) + "XXXXXX")).string();
  // mkstemp: unpredictable name, O_CREAT|O_EXCL (a link planted at that name is not followed).
  fd_ = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd_ < 0) fail("cannot create a temporary file beside it", errno);
  temp_ = temp;
}

AtomicOutputFile::~AtomicOutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

void AtomicOutputFile::fail(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
  std::string hint = err == ENOSPC || err == EDQUOT || err == EFBIG
                         ? "; free space or choose another file system; an existing file there was left as it was"
                         : "";
  throw InputError(fmt::format("{}: {} ({}){}", label(option_, path_), what, std::strerror(err), hint));
}

void AtomicOutputFile::write(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write failed", errno);
    if (n == 0) fail("write failed", EIO);
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

void AtomicOutputFile::commit() {
  if (::fchmod(fd_, file_mode()) != 0) fail("cannot set permissions", errno);
  // A full disk can surface only here (delayed allocation): checked, like close.
  if (::fsync(fd_) != 0) fail("write failed", errno);
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("write failed", errno);
  if (auto why = refusal(path_, existing_); !why.empty()) {
    ::unlink(temp_.c_str());
    temp_.clear();
    throw InputError(fmt::format("{}: {}", label(option_, path_), why));
  }
  int rc;
  if (existing_ == ExistingOutput::refuse) {
    rc = ::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {  // file system without RENAME_NOREPLACE
      rc = ::link(temp_.c_str(), path_.c_str());
      if (rc == 0) ::unlink(temp_.c_str());
    }
    if (rc != 0 && errno == EEXIST) {
      ::unlink(temp_.c_str());
      temp_.clear();
      throw InputError(fmt::format("{}: {}", label(option_, path_), refusal(path_, existing_)));
    }
  } else {
    rc = ::rename(temp_.c_str(), path_.c_str());
  }
  if (rc != 0) fail("cannot rename the temporary file into place", errno);
  committed_ = true;
}

void write_output_file(const fs::path& path, std::string_view content, const std::string& option,
                       ExistingOutput existing) {
  AtomicOutputFile out(path, option, existing);
  out.write(content);
  out.commit();
}

}  // namespace interprobe
