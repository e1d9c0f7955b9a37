#pragma once
// Snapshot archives (.tar.gz) through libarchive. The archive file is opened once and read
// into memory (bounded), so the pass that validates and the pass that extracts see the same
// bytes. Validation sees every entry before anything is written: only files, directories and
// symlinks; no absolute paths, no ".."; every link resolved through the tree the archive will
// become and refused when it leads outside; entry count, size, depth and path length bounded.
// Extraction writes through OutputTree: nothing is written through a link or outside `dest`.
#include <cstdint>
#include <filesystem>

#include "common/output_file.hpp"

namespace interprobe::snapshot {

// Symbolic links followed in a row at most, in an archive or an output tree: the kernel's own
// limit (past it, open() fails with ELOOP).
constexpr int kMaxLinkHops = 40;

struct ArchiveLimits {
  std::uint64_t max_archive_bytes = 64ull << 20;  // the .tar.gz file as stored
  std::uint64_t max_entries = 100000;
  std::uint64_t max_total_bytes = 256ull << 20;   // file contents, uncompressed
  std::size_t max_depth = 64;                     // path components of one entry
  std::size_t max_path_bytes = 1024;              // an entry's path, a link's target
};

bool looks_like_archive(const std::filesystem::path& path);
// Writes `dir` as a gzip'd tar at `file` (atomically: unpredictable temp file beside it +
// rename); `existing` says whether a regular file already at `file` may be replaced.
void write_archive(const std::filesystem::path& dir, const std::filesystem::path& file,
                   ExistingOutput existing = ExistingOutput::refuse);
// Extracts into `dest` (an empty directory); throws InputError naming the entry on refusal.
void extract_archive(const std::filesystem::path& file, const std::filesystem::path& dest,
                     const ArchiveLimits& limits = {});

// A new private (0700) directory removed with everything in it when this goes out of scope:
// under $TMPDIR, or `.interprobe-XXXXXX` inside `parent`.
class TempDir {
 public:
  TempDir();
  explicit TempDir(const std::filesystem::path& parent);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace interprobe::snapshot
