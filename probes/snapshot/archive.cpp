#include "probes/snapshot/archive.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/interrupt.hpp"
#include "common/user_file.hpp"
#include "probes/snapshot/archive_error.hpp"
#include "probes/snapshot/archive_index.hpp"
#include "probes/snapshot/output_tree.hpp"

namespace interprobe::snapshot {

namespace fs = std::filesystem;

namespace {

using ReadHandle = std::unique_ptr<archive, decltype(&archive_read_free)>;
using WriteHandle = std::unique_ptr<archive, decltype(&archive_write_free)>;

// The archive, read once through one descriptor: a file swapped or rewritten while we work
// cannot make the extraction differ from what was validated.
std::string read_archive_file(const fs::path& file, const ArchiveLimits& limits) {
  return read_user_file(file, {file.string(), "a snapshot archive or directory", limits.max_archive_bytes, false});
}

ReadHandle open_for_read(const std::string& data, const fs::path& file) {
  ReadHandle a(archive_read_new(), archive_read_free);
  // gzip only: "all" filters would run external decompressors on hostile input.
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_memory(a.get(), data.data(), data.size()) != ARCHIVE_OK)
    throw InputError(fmt::format("{}: cannot read snapshot archive: {}", file.string(), archive_error_text(a.get())));
  return a;
}

std::string entry_path(archive_entry* entry) {
  const char* raw = archive_entry_pathname(entry);
  return raw ? raw : "";
}

InputError refused(const fs::path& file, const std::string& path, const std::string& why) {
  constexpr std::size_t kShown = 160;  // a hostile path may be kilobytes long
  std::string shown = path.size() > kShown ? path.substr(0, kShown) + "..." : path;
  return InputError(fmt::format("{}: refused entry '{}': {}; this is not a snapshot interprobe wrote", file.string(),
                                shown, why));
}

ArchiveIndex::Kind kind_of(archive_entry* entry) {
  switch (archive_entry_filetype(entry)) {
    case AE_IFREG: return ArchiveIndex::Kind::file;
    case AE_IFDIR: return ArchiveIndex::Kind::directory;
    case AE_IFLNK: return ArchiveIndex::Kind::symlink;
    default: throw std::invalid_argument("not a file, directory or symlink");
  }
}

// Reads an entry's data blocks without filling holes (gzip decompresses a skipped entry all the
// same). A block anywhere but right after the previous one is a sparse map, which may place data
// terabytes past the declared size: extraction would write zeros up to it. libarchive drops such
// blocks from the entry's sparse list, so only the blocks themselves tell. False: the data is broken.
bool read_contiguous_data(archive* a, la_int64_t declared_bytes) {
  const void* block = nullptr;
  std::size_t size = 0;
  la_int64_t offset = 0, expected = 0;
  int rc;
  while ((rc = archive_read_data_block(a, &block, &size, &offset)) == ARCHIVE_OK) {
    if (offset != expected) throw std::invalid_argument("sparse file");
    expected += static_cast<la_int64_t>(size);
    if (expected > declared_bytes)
      throw std::invalid_argument(fmt::format("holds more than its declared {} bytes", declared_bytes));
  }
  return rc == ARCHIVE_EOF;
}

void validate_entries(const std::string& data, const fs::path& file, const ArchiveLimits& limits) {
  ReadHandle a = open_for_read(data, file);
  ArchiveIndex index(limits);
  archive_entry* entry = nullptr;
  std::uint64_t entries = 0, bytes = 0;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &entry)) == ARCHIVE_OK) {
    throw_if_interrupted();
    std::string path = entry_path(entry);
    if (++entries > limits.max_entries)
      throw InputError(fmt::format("{}: more than {} entries (the limit); refused (not a snapshot, or a hostile archive)",
                                   file.string(), limits.max_entries));
    try {
      auto parts = index.components(path);
      if (archive_entry_hardlink(entry)) throw std::invalid_argument("hard link");
      if (archive_entry_sparse_count(entry) > 0) throw std::invalid_argument("sparse file");  // never written by us
      auto kind = kind_of(entry);
      std::string target;
      if (kind == ArchiveIndex::Kind::symlink) {
        const char* t = archive_entry_symlink(entry);
        target = t ? t : "";
        if (target.size() > limits.max_path_bytes)
          throw std::invalid_argument(fmt::format("link target longer than {} bytes (the limit)", limits.max_path_bytes));
        if (target.empty() || target.front() == '/')
          throw std::invalid_argument(fmt::format("symlink to '{}' points outside the snapshot", target));
      }
      index.add(parts, kind, target);
    } catch (const std::invalid_argument& e) {
      throw refused(file, path, e.what());
    }
    bytes += static_cast<std::uint64_t>(std::max<la_int64_t>(0, archive_entry_size(entry)));
    if (bytes > limits.max_total_bytes)
      throw InputError(fmt::format("{}: more than {} bytes uncompressed (the limit); refused", file.string(),
                                   limits.max_total_bytes));
    try {
      if (!read_contiguous_data(a.get(), archive_entry_size(entry))) break;
    } catch (const std::invalid_argument& e) {
      throw refused(file, path, e.what());
    }
  }
  if (rc != ARCHIVE_EOF) {
    throw InputError(fmt::format("{}: archive broken after {} entries: {}", file.string(), entries, archive_error_text(a.get())));
  }
  try {
    index.check_links();
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format("{}: refused: {}; this is not a snapshot interprobe wrote", file.string(), e.what()));
  }
}

void extract_entries(const std::string& data, const fs::path& file, const fs::path& dest, const ArchiveLimits& limits) {
  ReadHandle a = open_for_read(data, file);
  ArchiveIndex paths(limits);  // the same normalization as the validation pass
  OutputTree tree(dest);
  archive_entry* entry = nullptr;
  std::uint64_t written_bytes = 0;
  while (archive_read_next_header(a.get(), &entry) == ARCHIVE_OK) {
    std::string path = entry_path(entry);
    std::string rel;
    for (const auto& part : paths.components(path)) rel += (rel.empty() ? "" : "/") + part;
    switch (archive_entry_filetype(entry)) {
      case AE_IFDIR:
        tree.make_directories(rel);
        break;
      case AE_IFLNK:
        if (!tree.make_symlink(rel, archive_entry_symlink(entry))) throw refused(file, path, "appears twice");
        break;
      default: {
        UniqueFd fd = tree.create_file(rel, /*exclusive=*/true);
        // The validation pass bounded the declared sizes; this bounds what is actually written,
        // whatever the reader makes of the entry.
        const auto declared_bytes = static_cast<std::uint64_t>(std::max<la_int64_t>(0, archive_entry_size(entry)));
        std::uint64_t entry_bytes = 0;
        char buffer[1 << 16];
        la_ssize_t n;
        while ((n = archive_read_data(a.get(), buffer, sizeof buffer)) > 0) {
          throw_if_interrupted();
          entry_bytes += static_cast<std::uint64_t>(n);
          written_bytes += static_cast<std::uint64_t>(n);
          if (entry_bytes > declared_bytes || written_bytes > limits.max_total_bytes)
            throw refused(file, path, fmt::format("holds more than its declared {} bytes", declared_bytes));
          if (::write(fd.get(), buffer, static_cast<std::size_t>(n)) != n)
            throw InputError(fmt::format("{}: cannot extract '{}' ({})", file.string(), path, std::strerror(errno)));
        }
        if (n < 0) throw InputError(fmt::format("{}: broken entry '{}': {}", file.string(), path, archive_error_text(a.get())));
      }
    }
  }
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
  std::string data = read_archive_file(file, limits);
  validate_entries(data, file, limits);
  extract_entries(data, file, dest, limits);
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = fmt::format("{}/interprobe-snapshot-XXXXXX", base && *base ? base : "/tmp");
  if (!::mkdtemp(tmpl.data())) throw InputError("cannot create a temporary directory under " + tmpl);
  path_ = tmpl;
}

TempDir::TempDir(const fs::path& parent) {
  std::string tmpl = (parent / (std::string(kTempPrefix) + "XXXXXX")).string();
  if (!::mkdtemp(tmpl.data()))
    throw InputError(fmt::format("cannot create a temporary directory in {} ({})", parent.string(), std::strerror(errno)));
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace interprobe::snapshot
