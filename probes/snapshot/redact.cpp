#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "probes/common/text.hpp"
#include "probes/snapshot/capture.hpp"

namespace interprobe::snapshot {

namespace fs = std::filesystem;

namespace {

// Values that identify one machine or its owner. Asset tags stay: Azure's is a signature.
const char* const kIdentifyingFiles[] = {
    "sys/class/dmi/id/product_serial", "sys/class/dmi/id/product_uuid", "sys/class/dmi/id/board_serial",
    "sys/class/dmi/id/chassis_serial", "proc/sys/kernel/hostname",      "etc/hostname"};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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
  auto replace = [&](const fs::path& file, const std::string& rel) {
    std::string value(trim(slurp(file)));
    if (value.empty()) return;
    std::ofstream(file, std::ios::trunc) << stable_hash(value) << "\n";
    manifest.redacted_paths.push_back("/" + rel);
  };
  for (const char* rel : kIdentifyingFiles) {
    fs::path file = out_dir / rel;
    std::error_code ec;
    if (fs::is_regular_file(fs::symlink_status(file, ec))) replace(file, rel);
  }
  std::error_code ec;
  // MAC addresses of network interfaces and InfiniBand GUIDs.
  for (auto it = fs::recursive_directory_iterator(out_dir, ec); it != fs::recursive_directory_iterator(); ++it) {
    std::error_code lec;
    if (!it->is_regular_file(lec) || it->is_symlink(lec)) continue;
    std::string name = it->path().filename().string();
    if (name == "address" || name == "node_guid" || name == "sys_image_guid" || name == "serial_number")
      replace(it->path(), it->path().lexically_relative(out_dir).string());
  }
  // The environment of PID 1 can hold secrets; only the container marker matters to us.
  fs::path environ = out_dir / "proc/1/environ";
  if (fs::is_regular_file(fs::symlink_status(environ, ec))) {
    std::string kept;
    for (const auto& var : split(slurp(environ), '\0'))
      if (var.rfind("container=", 0) == 0) kept += var + '\0';
    std::ofstream(environ, std::ios::binary | std::ios::trunc) << kept;
    manifest.redacted_paths.push_back("/proc/1/environ (all but container=)");
  }
}

}  // namespace interprobe::snapshot
