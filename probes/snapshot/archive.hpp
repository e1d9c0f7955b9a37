#pragma once
// Snapshot archives (.tar.gz) through libarchive. Reading validates every entry before
// anything is written: no absolute paths, no "..", no links leaving the tree, only files,
// directories and symlinks, bounded entry count and size.
#include <cstdint>
#include <filesystem>

namespace interprobe::snapshot {

struct ArchiveLimits {
  std::uint64_t max_entries = 100000;
  std::uint64_t max_total_bytes = 1ull << 30;
};

bool looks_like_archive(const std::filesystem::path& path);
// Writes `dir` as a gzip'd tar at `file` (atomically: temp file + rename).
void write_archive(const std::filesystem::path& dir, const std::filesystem::path& file);
// Extracts into `dest` (an empty directory); throws InputError naming the entry on refusal.
void extract_archive(const std::filesystem::path& file, const std::filesystem::path& dest,
                     const ArchiveLimits& limits = {});

// A directory under $TMPDIR removed with everything in it when this goes out of scope.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace interprobe::snapshot
