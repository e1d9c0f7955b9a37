// The archive form of a hostile tree, written with libarchive (the project's own dependency):
// every entry as what it is on disk, FIFOs and device nodes included, sparse files as sparse
// pax entries (a 4 GiB file costs a few bytes), then raw entries no tree can hold.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include "support/hostile_tree.hpp"

namespace interprobe::testing {

namespace fs = std::filesystem;

namespace {

constexpr off_t kArchiveSparseBytes = 128ll << 20;

using Writer = std::unique_ptr<archive, decltype(&archive_write_free)>;
using Entry = std::unique_ptr<archive_entry, decltype(&archive_entry_free)>;

void check(archive* a, int rc, const std::string& what) {
  if (rc < ARCHIVE_WARN) throw std::runtime_error(what + ": " + (archive_error_string(a) ? archive_error_string(a) : "?"));
}

void write_all(archive* a, const char* data, size_t size, const std::string& name) {
  for (size_t at = 0; at < size;) {
    la_ssize_t n = archive_write_data(a, data + at, size - at);
    if (n <= 0) throw std::runtime_error(name + ": " + (archive_error_string(a) ? archive_error_string(a) : "?"));
    at += static_cast<size_t>(n);
  }
}

// Writes `size` bytes of `fd`: data regions as read, holes as zeros the pax writer skips
// (without reading gigabytes of holes from the file).
void write_contents(archive* a, int fd, off_t size, const std::string& name) {
  static const std::vector<char> zeros(1 << 20, 0);
  std::vector<char> buffer(1 << 20);
  for (off_t done = 0; done < size;) {
    off_t data = ::lseek(fd, done, SEEK_DATA);
    if (data < 0) data = size;  // a hole up to the end
    for (; done < data;) {
      auto n = static_cast<size_t>(std::min<off_t>(static_cast<off_t>(zeros.size()), data - done));
      write_all(a, zeros.data(), n, name);
      done += static_cast<off_t>(n);
    }
    if (done >= size) break;
    off_t hole = ::lseek(fd, done, SEEK_HOLE);
    if (hole < 0) hole = size;
    for (; done < hole;) {
      auto want = static_cast<size_t>(std::min<off_t>(static_cast<off_t>(buffer.size()), hole - done));
      ssize_t got = ::pread(fd, buffer.data(), want, done);
      if (got <= 0) throw std::runtime_error("cannot read " + name);
      write_all(a, buffer.data(), static_cast<size_t>(got), name);
      done += got;
    }
  }
}

// Data regions of a file with holes, for the entry's sparse map.
void add_sparse_map(archive_entry* e, int fd, off_t size) {
  if (::lseek(fd, 0, SEEK_DATA) < 0) {  // all hole: one empty data region, as bsdtar records it
    archive_entry_sparse_add_entry(e, 0, 0);
    return;
  }
  for (off_t at = 0; at < size;) {
    off_t data = ::lseek(fd, at, SEEK_DATA);
    if (data < 0) break;
    if (data >= size) break;
    off_t hole = ::lseek(fd, data, SEEK_HOLE);
    if (hole < 0 || hole > size) hole = size;
    archive_entry_sparse_add_entry(e, data, hole - data);
    at = hole;
  }
}

void write_disk_entry(archive* a, const fs::path& tree, const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) throw std::runtime_error("lstat " + p.string());
  Entry e(archive_entry_new(), archive_entry_free);
  std::string name = p.lexically_relative(tree).string();
  archive_entry_set_pathname(e.get(), name.c_str());
  archive_entry_copy_stat(e.get(), &st);
  int fd = -1;
  if (S_ISLNK(st.st_mode)) {
    archive_entry_set_symlink(e.get(), fs::read_symlink(p).c_str());
  } else if (S_ISREG(st.st_mode)) {
    fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) throw std::runtime_error("open " + p.string());
    if (st.st_blocks * 512 < st.st_size) {
      // Sparse (the huge plants): cut to a size the archive's 1 GiB budget lets through, so
      // extraction succeeds and the readers meet them; still far above any sysfs file.
      st.st_size = std::min<off_t>(st.st_size, kArchiveSparseBytes);
      archive_entry_set_size(e.get(), st.st_size);
      add_sparse_map(e.get(), fd, st.st_size);
    }
  } else if (!S_ISDIR(st.st_mode)) {
    archive_entry_set_size(e.get(), 0);  // FIFOs and device nodes: a header, no data
  }
  check(a, archive_write_header(a, e.get()), "header " + name);
  if (fd >= 0) {
    write_contents(a, fd, st.st_size, name);
    ::close(fd);
  }
}

void write_extra(archive* a, const HostileSandbox::ArchiveEntry& x) {
  using K = HostileSandbox::ArchiveEntry::Kind;
  Entry e(archive_entry_new(), archive_entry_free);
  archive_entry_set_pathname(e.get(), x.path.c_str());
  archive_entry_set_mtime(e.get(), 1700000000, 0);
  archive_entry_set_filetype(e.get(), x.kind == K::directory ? AE_IFDIR : x.kind == K::symlink ? AE_IFLNK : AE_IFREG);
  archive_entry_set_perm(e.get(), x.kind == K::directory ? 0755 : 0644);
  if (x.kind == K::symlink) archive_entry_set_symlink(e.get(), x.target.c_str());
  if (x.kind == K::hardlink) archive_entry_set_hardlink(e.get(), x.target.c_str());
  archive_entry_set_size(e.get(), x.kind == K::file ? static_cast<la_int64_t>(x.content.size()) : 0);
  check(a, archive_write_header(a, e.get()), "header " + x.path);
  if (x.kind == K::file && !x.content.empty() &&
      archive_write_data(a, x.content.data(), x.content.size()) != static_cast<la_ssize_t>(x.content.size()))
    throw std::runtime_error("data " + x.path);
}

}  // namespace

void write_hostile_archive(const fs::path& tree, const std::vector<HostileSandbox::ArchiveEntry>& extras,
                           const fs::path& file) {
  Writer a(archive_write_new(), archive_write_free);
  archive_write_add_filter_gzip(a.get());
  archive_write_set_format_pax(a.get());
  check(a.get(), archive_write_open_filename(a.get(), file.c_str()), "open " + file.string());
  std::vector<fs::path> paths;
  for (auto it = fs::recursive_directory_iterator(tree); it != fs::recursive_directory_iterator(); ++it)
    paths.push_back(it->path());
  std::sort(paths.begin(), paths.end());  // parents before children
  for (const auto& p : paths) write_disk_entry(a.get(), tree, p);
  for (const auto& x : extras) write_extra(a.get(), x);
  check(a.get(), archive_write_close(a.get()), "close " + file.string());
}

}  // namespace interprobe::testing
