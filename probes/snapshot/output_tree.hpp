#pragma once
// A directory the snapshot writes into (a capture being staged, an archive being extracted).
// Its contents come from an untrusted machine or archive, symlinks included, so every write is
// resolved component by component from a descriptor of the directory with O_NOFOLLOW: no write
// follows a link and none leaves the directory, whatever links the tree already holds.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/unique_fd.hpp"

namespace interprobe::snapshot {

class OutputTree {
 public:
  // Creates `dir` when missing (not through a link) and holds it open.
  explicit OutputTree(const std::filesystem::path& dir);
  const std::filesystem::path& path() const { return dir_; }

  // Paths are relative to the tree ("sys/class/dmi/id"; a leading '/' is ignored); ".." throws.
  // A symbolic link met on the way is never followed: InputError naming the path.
  void make_directories(std::string_view rel);
  // Creates or truncates a regular file. A symbolic link at `rel` itself is replaced (the tree
  // is ours; its links were copied from the machine); with `exclusive`, anything there throws.
  UniqueFd create_file(std::string_view rel, bool exclusive = false);
  void write_file(std::string_view rel, std::string_view content, bool exclusive = false);
  // false when something already exists at `rel`.
  bool make_symlink(std::string_view rel, const std::string& target);
  bool is_symlink(std::string_view rel) const;

  // Where `rel` leads inside the tree as a replay would resolve it: links are followed, an
  // absolute target starts again at the tree's top and ".." stops there. nullopt when it leads
  // nowhere (missing, a loop, more than 40 links).
  std::optional<std::string> resolve(std::string_view rel) const;
  // The content of a regular file at a link-free `rel`, at most `max_bytes`; nullopt otherwise.
  std::optional<std::string> read_regular(std::string_view rel, std::size_t max_bytes) const;

 private:
  // Opens the directory holding `rel`'s last component (creating directories when asked) and
  // returns it with that component's name.
  UniqueFd open_parent(std::string_view rel, bool create, std::string* leaf) const;
  std::filesystem::path dir_;
  UniqueFd root_;
};

}  // namespace interprobe::snapshot
