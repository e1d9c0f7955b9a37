#include <set>

#include <fmt/format.h>

#include "common/text.hpp"
#include "probes/snapshot/capture.hpp"
#include "probes/snapshot/output_tree.hpp"

namespace interprobe::snapshot {

namespace fs = std::filesystem;

namespace {

// Values that identify one machine or its owner. Asset tags stay: Azure's is a signature.
const char* const kIdentifyingFiles[] = {
    "sys/class/dmi/id/product_serial", "sys/class/dmi/id/product_uuid", "sys/class/dmi/id/board_serial",
    "sys/class/dmi/id/chassis_serial", "proc/sys/kernel/hostname",      "etc/hostname"};

// What the capture copies at most (HostRoot's cap); a larger file was not copied.
constexpr std::size_t kMaxRedactedBytes = HostRoot::kDefaultMaxBytes;

}  // namespace

std::string stable_hash(const std::string& value) {
  // FNV-1a 64: stable across runs and machines, so two snapshots of one host still match.
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : value) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("redacted-{:012x}", h & 0xffffffffffffull);
}

void redact_tree(const fs::path& out_dir, Manifest& manifest) {
  // The captured tree holds the machine's links (an absolute one points at this host's own
  // files), so every path is resolved inside the tree and written without following a link.
  OutputTree tree(out_dir);
  std::set<std::string> done;  // two names of one file: hashed once
  auto replace = [&](const std::string& rel, const std::string& shown) {
    auto physical = tree.resolve(rel);
    if (!physical || !done.insert(*physical).second) return;
    auto content = tree.read_regular(*physical, kMaxRedactedBytes);
    if (!content) return;
    std::string value(trim(*content));
    if (value.empty()) return;
    tree.write_file(*physical, stable_hash(value) + "\n");
    manifest.redacted_paths.push_back("/" + shown);
  };
  for (const char* rel : kIdentifyingFiles) replace(rel, rel);
  // MAC addresses of network interfaces and InfiniBand GUIDs. The walk does not enter linked
  // directories; every file it meets is a real one of the tree.
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(out_dir, ec); it != fs::recursive_directory_iterator(); ++it) {
    std::error_code lec;
    if (it->is_symlink(lec) || !it->is_regular_file(lec)) continue;
    std::string name = it->path().filename().string();
    if (name == "address" || name == "node_guid" || name == "sys_image_guid" || name == "serial_number") {
      std::string rel = it->path().lexically_relative(out_dir).string();
      replace(rel, rel);
    }
  }
  // The environment of PID 1 can hold secrets; only the container marker matters to us.
  auto environ = tree.resolve("proc/1/environ");
  if (!environ) return;
  auto content = tree.read_regular(*environ, kMaxRedactedBytes);
  if (!content) return;
  std::string kept;
  for (const auto& var : split(*content, '\0'))
    if (var.rfind("container=", 0) == 0) kept += var + '\0';
  tree.write_file(*environ, kept);
  manifest.redacted_paths.push_back("/proc/1/environ (all but container=)");
}

}  // namespace interprobe::snapshot
