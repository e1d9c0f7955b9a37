// Writing a captured tree as .tar.gz. The tree is our private staging directory; the archive
// goes to an unpredictable temporary file beside the destination and is renamed over it.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/interrupt.hpp"
#include "probes/snapshot/archive_error.hpp"
#include "probes/snapshot/archive.hpp"
#include "probes/snapshot/output_tree.hpp"

namespace interprobe::snapshot {

namespace fs = std::filesystem;

namespace {

using WriteHandle = std::unique_ptr<archive, decltype(&archive_write_free)>;
using EntryHandle = std::unique_ptr<archive_entry, decltype(&archive_entry_free)>;

class TarWriter {
 public:
  TarWriter(const fs::path& file, int fd) : file_(file), a_(archive_write_new(), archive_write_free) {
    archive_write_add_filter_gzip(a_.get());
    archive_write_set_format_pax_restricted(a_.get());
    check(archive_write_open_fd(a_.get(), fd));
  }
  void check(int rc) {
    if (rc < ARCHIVE_WARN)
      throw InputError(fmt::format("-o {}: write failed: {}", file_.string(), archive_error_text(a_.get(), "unknown error")));
  }
  void add(const fs::path& dir, const fs::path& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return;
    EntryHandle e(archive_entry_new(), archive_entry_free);
    std::string rel = p.lexically_relative(dir).string();  // fs::relative would follow links
    archive_entry_set_pathname(e.get(), rel.c_str());
    archive_entry_set_mtime(e.get(), st.st_mtime, 0);
    if (S_ISLNK(st.st_mode)) {
      archive_entry_set_filetype(e.get(), AE_IFLNK);
      archive_entry_set_perm(e.get(), 0777);
      archive_entry_set_symlink(e.get(), fs::read_symlink(p).c_str());
    } else if (S_ISDIR(st.st_mode)) {
      archive_entry_set_filetype(e.get(), AE_IFDIR);
      archive_entry_set_perm(e.get(), 0755);
    } else if (S_ISREG(st.st_mode)) {
      archive_entry_set_filetype(e.get(), AE_IFREG);
      archive_entry_set_perm(e.get(), 0644);
      archive_entry_set_size(e.get(), st.st_size);
    } else {
      return;
    }
    check(archive_write_header(a_.get(), e.get()));
    if (!S_ISREG(st.st_mode)) return;
    UniqueFd in(::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (in.get() < 0) throw InputError(fmt::format("{}: cannot read ({})", p.string(), std::strerror(errno)));
    char buffer[1 << 16];
    ssize_t n;
    while ((n = ::read(in.get(), buffer, sizeof buffer)) > 0)
      if (archive_write_data(a_.get(), buffer, static_cast<std::size_t>(n)) < 0) check(ARCHIVE_FATAL);
  }
  void close() { check(archive_write_close(a_.get())); }

 private:
  fs::path file_;
  WriteHandle a_;
};

}  // namespace

void write_archive(const fs::path& dir, const fs::path& file, ExistingOutput existing) {
  AtomicOutputFile out(file, "-o", existing);
  std::vector<fs::path> paths;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it)
    paths.push_back(it->path());
  std::sort(paths.begin(), paths.end());
  {
    TarWriter tar(file, out.fd());
    for (const auto& p : paths) {
      throw_if_interrupted();
      tar.add(dir, p);
    }
    tar.close();
  }
  out.commit();
}

}  // namespace interprobe::snapshot
