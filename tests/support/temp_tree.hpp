#pragma once
// A scratch machine tree for tests: empty or a writable copy of a fixture (symlinks kept as
// links), removed at scope end. Paths given to its helpers are either inside the tree (from
// at()) or relative to its root ("proc/self/status").
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace interprobe::testing {

class TempTree {
 public:
  // `fixture` empty: an empty tree. Under $TMPDIR when set (the fuzzers use tmpfs), else /tmp.
  explicit TempTree(const std::filesystem::path& fixture = {}) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/interprobe-tree-XXXXXX";
    const char* made = ::mkdtemp(pattern.data());
    if (!made) throw std::runtime_error("mkdtemp failed");
    path_ = made;
    std::filesystem::permissions(path_, std::filesystem::perms(0755));
    if (!fixture.empty())
      std::filesystem::copy(fixture, path_, std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  }
  ~TempTree() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Where machine path "/sys/..." lives in the tree.
  std::filesystem::path at(const std::string& machine_path) const { return path_ / machine_path.substr(1); }
  // The device directory behind /sys/bus/pci/devices/<bdf>, on this machine.
  std::filesystem::path device(const std::string& bdf) const {
    return std::filesystem::canonical(at("/sys/bus/pci/devices/" + bdf));
  }
  // Replaces the file (a link there is removed, not written through), creating directories.
  void write(const std::filesystem::path& where, const std::string& content) const {
    auto file = inside(where);
    std::error_code ec;
    std::filesystem::remove(file, ec);
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << content;
  }
  void relink(const std::filesystem::path& link, const std::string& target) const {
    auto file = inside(link);
    std::error_code ec;
    std::filesystem::remove(file, ec);
    std::filesystem::create_symlink(target, file);
  }
  void remove(const std::filesystem::path& where) const { std::filesystem::remove(inside(where)); }
  void chmod(const std::filesystem::path& where, unsigned mode) const {
    std::filesystem::permissions(inside(where), std::filesystem::perms(mode));
  }

 private:
  std::filesystem::path inside(const std::filesystem::path& where) const {
    if (where.is_relative()) return path_ / where;
    auto rel = where.lexically_relative(path_);
    if (rel.empty() || *rel.begin() == "..") throw std::invalid_argument(where.string() + " is not inside " + path_.string());
    return where;
  }
  std::filesystem::path path_;
};

}  // namespace interprobe::testing
