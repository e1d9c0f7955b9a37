#pragma once
// The entries of a snapshot archive as the tree they will become once extracted, so every
// symlink can be resolved the way the kernel will resolve it later (for libpci, hwloc and our
// own reads): a link that reaches outside only through other links (`x -> .`, `up -> x/..`)
// is found, which no lexical check of one target can do. Internal to archive.cpp.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "probes/snapshot/archive.hpp"

namespace interprobe::snapshot {

class ArchiveIndex {
 public:
  enum class Kind { directory, file, symlink };

  explicit ArchiveIndex(const ArchiveLimits& limits);
  ~ArchiveIndex();
  // Normalized components of an entry path ("./a//b/" -> a, b); throws std::invalid_argument
  // with the reason for absolute paths, "..", and paths beyond the length or depth limits.
  std::vector<std::string> components(const std::string& path) const;
  // Adds an entry; throws std::invalid_argument when it clashes with one already there (twice,
  // or below a file or link).
  void add(const std::vector<std::string>& parts, Kind kind, const std::string& link_target = {});
  // Throws std::invalid_argument naming the first link that leads outside the tree or loops.
  void check_links() const;

 private:
  struct Node;
  const ArchiveLimits& limits_;
  std::unique_ptr<Node> root_;
  std::vector<Node*> links_;
  std::uint64_t nodes_ = 0;  // entries and the directories they imply, bounded by max_entries
};

}  // namespace interprobe::snapshot
