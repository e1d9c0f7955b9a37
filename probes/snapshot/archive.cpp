#include "probes/snapshot/archive.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "probes/common/errors.hpp"
#include "probes/common/text.hpp"

namespace interprobe::snapshot {

namespace fs = std::filesystem;

namespace {

using ReadHandle = std::unique_ptr<archive, decltype(&archive_read_free)>;
using WriteHandle = std::unique_ptr<archive, decltype(&archive_write_free)>;

ReadHandle open_for_read(const fs::path& file) {
  ReadHandle a(archive_read_new(), archive_read_free);
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_filename(a.get(), file.c_str(), 1 << 16) != ARCHIVE_OK)
    throw InputError(fmt::format("{}: cannot read snapshot archive: {}", file.string(), archive_error_string(a.get())));
  return a;
}

// Lexically resolves `target` against the entry's directory; false when it leaves the tree.
bool stays_inside(const std::string& entry_path, const std::string& target) {
  if (target.empty() || target.front() == '/') return false;
  std::vector<std::string> parts;
  for (const auto& p : split(entry_path, '/'))
    if (!p.empty() && p != ".") parts.push_back(p);
  if (!parts.empty()) parts.pop_back();  // the link itself
  for (const auto& p : split(target, '/')) {
    if (p.empty() || p == ".") continue;
    if (p == "..") {
      if (parts.empty()) return false;
      parts.pop_back();
    } else {
      parts.push_back(p);
    }
  }
  return true;
}

void validate_entries(const fs::path& file, const ArchiveLimits& limits) {
  ReadHandle a = open_for_read(file);
  archive_entry* entry = nullptr;
  std::uint64_t entries = 0, bytes = 0;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &entry)) == ARCHIVE_OK) {
    const char* raw = archive_entry_pathname(entry);
    std::string path = raw ? raw : "";
    auto refuse = [&](const std::string& why) {
      return InputError(fmt::format("{}: refused entry '{}': {}; this is not a snapshot interprobe wrote",
                                    file.string(), path, why));
    };
    if (++entries > limits.max_entries)
      throw InputError(fmt::format("{}: more than {} entries; refused (not a snapshot, or a hostile archive)",
                                   file.string(), limits.max_entries));
    if (path.empty() || path.front() == '/') throw refuse("absolute path");
    for (const auto& part : split(path, '/'))
      if (part == "..") throw refuse("path contains '..'");
    if (archive_entry_hardlink(entry)) throw refuse("hard link");
    auto type = archive_entry_filetype(entry);
    if (type == AE_IFLNK) {
      const char* target = archive_entry_symlink(entry);
      if (!target || !stays_inside(path, target))
        throw refuse(fmt::format("symlink to '{}' points outside the snapshot", target ? target : ""));
    } else if (type != AE_IFREG && type != AE_IFDIR) {
      throw refuse("not a file, directory or symlink");
    }
    bytes += static_cast<std::uint64_t>(std::max<la_int64_t>(0, archive_entry_size(entry)));
    if (bytes > limits.max_total_bytes)
      throw InputError(fmt::format("{}: more than {} bytes uncompressed; refused", file.string(), limits.max_total_bytes));
    archive_read_data_skip(a.get());
  }
  if (rc != ARCHIVE_EOF)
    throw InputError(fmt::format("{}: archive broken after {} entries: {}", file.string(), entries,
                                 archive_error_string(a.get())));
}

}  // namespace

bool looks_like_archive(const fs::path& path) {
  std::string name = path.filename().string();
  auto ends = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends(".tar.gz") || ends(".tgz") || ends(".tar");
}

void extract_archive(const fs::path& file, const fs::path& dest, const ArchiveLimits& limits) {
  validate_entries(file, limits);
  ReadHandle a = open_for_read(file);
  WriteHandle out(archive_write_disk_new(), archive_write_free);
  // Entries were validated as relative above; they are written under the absolute `dest`, so
  // SECURE_NOABSOLUTEPATHS would refuse our own prefix. The other guards stay on.
  archive_write_disk_set_options(out.get(), ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                                ARCHIVE_EXTRACT_NO_OVERWRITE);
  archive_entry* entry = nullptr;
  while (archive_read_next_header(a.get(), &entry) == ARCHIVE_OK) {
    std::string target = (dest / archive_entry_pathname(entry)).string();
    archive_entry_set_pathname(entry, target.c_str());
    if (archive_entry_filetype(entry) == AE_IFDIR) archive_entry_set_perm(entry, 0755);
    else if (archive_entry_filetype(entry) == AE_IFREG) archive_entry_set_perm(entry, 0644);
    if (archive_write_header(out.get(), entry) != ARCHIVE_OK)
      throw InputError(fmt::format("{}: cannot extract '{}': {}", file.string(), target, archive_error_string(out.get())));
    const void* block = nullptr;
    size_t size = 0;
    la_int64_t offset = 0;
    while (archive_read_data_block(a.get(), &block, &size, &offset) == ARCHIVE_OK)
      archive_write_data_block(out.get(), block, size, offset);
    archive_write_finish_entry(out.get());
  }
}

void write_archive(const fs::path& dir, const fs::path& file) {
  fs::path temp = file;
  temp += fmt::format(".tmp.{}", ::getpid());
  {
    WriteHandle a(archive_write_new(), archive_write_free);
    archive_write_add_filter_gzip(a.get());
    archive_write_set_format_pax_restricted(a.get());
    if (archive_write_open_filename(a.get(), temp.c_str()) != ARCHIVE_OK)
      throw InputError(fmt::format("{}: cannot write: {}", file.string(), archive_error_string(a.get())));
    std::vector<fs::path> paths;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it)
      paths.push_back(it->path());
    std::sort(paths.begin(), paths.end());
    for (const auto& p : paths) {
      struct stat st {};
      if (::lstat(p.c_str(), &st) != 0) continue;
      std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(archive_entry_new(), archive_entry_free);
      std::string rel = p.lexically_relative(dir).string();  // fs::relative would follow links
      archive_entry_set_pathname(e.get(), rel.c_str());
      archive_entry_set_mtime(e.get(), st.st_mtime, 0);
      std::string content;
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
        continue;
      }
      archive_write_header(a.get(), e.get());
      if (S_ISREG(st.st_mode)) {
        FILE* f = std::fopen(p.c_str(), "rb");
        if (f) {
          char buffer[65536];
          size_t n;
          while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) archive_write_data(a.get(), buffer, n);
          std::fclose(f);
        }
      }
    }
    if (archive_write_close(a.get()) != ARCHIVE_OK)
      throw InputError(fmt::format("{}: write failed: {}", file.string(), archive_error_string(a.get())));
  }
  fs::rename(temp, file);
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = fmt::format("{}/interprobe-snapshot-XXXXXX", base && *base ? base : "/tmp");
  if (!::mkdtemp(tmpl.data())) throw InputError("cannot create a temporary directory under " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace interprobe::snapshot
