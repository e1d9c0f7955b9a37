#pragma once
// Every read of machine state (/sys, /proc, DMI, /dev markers) goes through a HostRoot.
// A root other than "/" replays a fixture or snapshot: paths resolve as in a chroot at the
// root (absolute symlink targets are re-rooted), and a ".." that would climb above the root
// throws RootEscapeError. Nothing here touches live hardware.
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace interprobe {

enum class ReadFailure { none, missing, permission_denied, symlink_loop, not_a_file, too_large, io_error };

const char* to_string(ReadFailure failure);
// Stable names for files: "permission_denied", "io_error" ...; nullopt for an unknown name.
const char* failure_name(ReadFailure failure);
std::optional<ReadFailure> failure_from_name(std::string_view name);

struct FileRead {
  std::optional<std::string> content;  // set when failure == none
  ReadFailure failure = ReadFailure::none;
  bool ok() const { return failure == ReadFailure::none; }
};

// Records which machine paths were touched, so a snapshot can capture exactly what the
// probes read. Thread-safe; attach with HostRoot::set_access_log.
class AccessLog {
 public:
  enum class Kind { file, directory, path };
  AccessLog();
  void record(Kind kind, std::string_view machine_path);
  std::vector<std::pair<Kind, std::string>> entries() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

struct ResolvedPath {
  std::filesystem::path host_path;  // where it lives on this machine
  std::string machine_path;         // canonical path as seen inside the root ("/sys/devices/...")
  ReadFailure failure = ReadFailure::none;
  unsigned mode = 0;                // st_mode of what it names (lstat: never a link); 0 when unknown
};

class UniqueFd;

// Limits on what one read may cost, whatever a tree holds (a FIFO, a device node, a 10 GB file):
//  - only regular files are read (a FIFO or device is ReadFailure::not_a_file, never opened
//    for reading; opens are O_NONBLOCK so a file swapped for a FIFO meanwhile cannot block);
//  - read() takes at most max_bytes (default kDefaultMaxBytes, 16 MiB: /proc/cpuinfo of a
//    large machine, nvml.json); read_text() at most kTextMaxBytes (64 KiB: one sysfs or
//    procfs attribute is at most a page); more is ReadFailure::too_large;
//  - list() returns at most kMaxListEntries names.
class HostRoot {
 public:
  static constexpr std::size_t kDefaultMaxBytes = 16u << 20;
  static constexpr std::size_t kTextMaxBytes = 64u << 10;
  static constexpr std::size_t kManifestMaxBytes = 16u << 20;
  static constexpr std::size_t kMaxListEntries = 1u << 18;

  // The live machine ("/").
  HostRoot();
  // A tree standing for a machine; throws InputError when it does not exist or is no directory,
  // or when its manifest.json exists but cannot be read (the message says why).
  // A snapshot's manifest.json lists files that existed but could not be read on the machine
  // (`unreadable[].failure`); reading one of those fails the same way again instead of "missing".
  explicit HostRoot(const std::filesystem::path& root);
  static constexpr const char* kManifestPath = "/manifest.json";

  bool is_live() const { return live_; }
  // The tree's directory, opened once (O_PATH); -1 on the live machine. Handing a library
  // "/proc/self/fd/N" instead of the path pins it to the directory we checked.
  int descriptor() const;
  const std::filesystem::path& root() const { return root_; }

  // Resolves every symlink on the way; throws RootEscapeError when the path leaves the root.
  ResolvedPath resolve(std::string_view machine_path) const;

  FileRead read(std::string_view machine_path, std::size_t max_bytes = kDefaultMaxBytes) const;
  // Content (at most kTextMaxBytes) with surrounding whitespace trimmed; nullopt when the file
  // cannot be read.
  std::optional<std::string> read_text(std::string_view machine_path) const;
  // Entry names of a directory, sorted; empty when it is missing or unreadable.
  std::vector<std::string> list(std::string_view machine_path) const;
  bool exists(std::string_view machine_path) const;
  bool is_directory(std::string_view machine_path) const;
  // Canonical in-root path, or nullopt when some component is missing or loops.
  std::optional<std::string> canonical(std::string_view machine_path) const;
  // The raw target of a symlink (not followed), or nullopt when it is not a link.
  std::optional<std::string> link_target(std::string_view machine_path) const;

  // How a replayed snapshot's manifest says this (canonical) path failed on the machine.
  std::optional<ReadFailure> recorded_failure(const std::string& machine_path) const;

  // Every later access is recorded in `log` (nullptr stops recording).
  void set_access_log(AccessLog* log) { log_ = log; }

 private:
  void note(AccessLog::Kind kind, std::string_view machine_path) const {
    if (log_) log_->record(kind, machine_path);
  }
  // Opens a canonical machine path (from resolve) below the root without following links.
  UniqueFd open_machine(const std::string& canonical_path, int flags) const;
  AccessLog* log_ = nullptr;
  std::shared_ptr<const UniqueFd> root_fd_;  // the tree (O_PATH); null on the live machine
  std::shared_ptr<const std::map<std::string, ReadFailure>> recorded_failures_;
  std::filesystem::path root_;
  bool live_ = true;
};

}  // namespace interprobe
