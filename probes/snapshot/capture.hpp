#pragma once
// Captures a machine into a directory tree that `--root` replays: exactly the files the
// probes read (recorded through an AccessLog), the fixed set of detection files, the
// CPUID leaves as cpuid.txt, and manifest.json saying what could not be read and why.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/host_root.hpp"
#include "probes/snapshot/output_tree.hpp"

namespace interprobe {
class CpuidSource;
}

namespace interprobe::snapshot {

// A file the probes wanted that the snapshot could not take. `failure` (for machine files) lets
// a replay fail the same way: permission denied stays "needs root", not "absent".
struct UnreadablePath {
  std::string path;
  std::string reason;
  std::optional<ReadFailure> failure;
};

struct Manifest {
  std::string tool_version;
  std::string created_at;
  bool redacted = true;
  std::vector<std::string> redacted_paths;
  std::vector<UnreadablePath> unreadable;
  std::size_t files = 0;
  std::size_t links = 0;
  std::uint64_t bytes = 0;
};

class Capture {
 public:
  Capture(const HostRoot& source, std::filesystem::path out_dir);
  // Copies one machine path (file or directory listing) with every symlink on its way.
  void path(const std::string& machine_path, bool list_directory);
  // A whole small tree, `depth` levels deep; links are recreated, not followed.
  void tree(const std::string& machine_path, int depth);
  void everything_in(const AccessLog& log);
  void fixed_detection_set();  // includes cpu_topology()
  void cpu_topology();
  void cpuid(const CpuidSource& cpuid);
  void write_file(const std::string& machine_path, const std::string& content);
  Manifest& manifest() { return manifest_; }
  void finish();  // writes manifest.json

 private:
  bool listed_unreadable(const std::string& machine_path) const;
  void keep_recorded_failure(const std::string& machine_path);
  void copy_file(const std::string& machine_path, unsigned mode);
  void make_link(const std::string& machine_path, const std::string& target);
  const HostRoot& source_;
  std::filesystem::path out_dir_;
  OutputTree output_;  // every write into out_dir_ goes through it
  Manifest manifest_;
};

// Writes hwloc's XML export of `root` to `file`; false with the reason when it cannot.
bool export_hwloc_xml(const HostRoot& root, const std::filesystem::path& file, std::string* why);

// Replaces serials, UUIDs, MAC addresses and host names in the captured tree with stable
// hashes ("redacted-<12 hex>"); only `container=` survives from /proc/1/environ.
void redact_tree(const std::filesystem::path& out_dir, Manifest& manifest);
std::string stable_hash(const std::string& value);

}  // namespace interprobe::snapshot
