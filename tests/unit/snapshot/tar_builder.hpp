#pragma once
// Builds .tar.gz archives entry by entry with libarchive's writer, for archive tests: links,
// hard links and hostile paths included, made at test time (no binary blobs in the repo).
#include <archive.h>
#include <archive_entry.h>

#include <filesystem>
#include <string>
#include <vector>

namespace interprobe::testing {

struct TarEntry {
  std::string path;
  enum { file, dir, link, hardlink, fifo } type = file;
  std::string content_or_target;
};

inline std::filesystem::path make_tar_gz(const std::filesystem::path& file, const std::vector<TarEntry>& entries) {
  archive* a = archive_write_new();
  archive_write_add_filter_gzip(a);
  archive_write_set_format_pax_restricted(a);
  archive_write_open_filename(a, file.c_str());
  for (const auto& e : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.path.c_str());
    if (e.type == TarEntry::file) {
      archive_entry_set_filetype(entry, AE_IFREG);
      archive_entry_set_perm(entry, 0644);
      archive_entry_set_size(entry, static_cast<la_int64_t>(e.content_or_target.size()));
    } else if (e.type == TarEntry::dir) {
      archive_entry_set_filetype(entry, AE_IFDIR);
      archive_entry_set_perm(entry, 0755);
    } else if (e.type == TarEntry::link) {
      archive_entry_set_filetype(entry, AE_IFLNK);
      archive_entry_set_symlink(entry, e.content_or_target.c_str());
    } else if (e.type == TarEntry::fifo) {
      archive_entry_set_filetype(entry, AE_IFIFO);
      archive_entry_set_perm(entry, 0644);
    } else {
      archive_entry_set_filetype(entry, AE_IFREG);
      archive_entry_set_hardlink(entry, e.content_or_target.c_str());
    }
    archive_write_header(a, entry);
    if (e.type == TarEntry::file) archive_write_data(a, e.content_or_target.data(), e.content_or_target.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
  return file;
}

}  // namespace interprobe::testing
