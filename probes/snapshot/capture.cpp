#include "probes/snapshot/capture.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/cpuid.hpp"
#include "common/json_text.hpp"
#include "common/text.hpp"

namespace interprobe::snapshot {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxHops = 40;

// What the topology and virtualization probes read of every PCI function, captured even
// when a probe of this build does not read it, so a newer interprobe can replay the snapshot.
const char* const kPciAttributes[] = {
    "vendor", "device", "class", "subsystem_vendor", "subsystem_device", "revision", "numa_node",
    "local_cpulist", "local_cpus", "current_link_speed", "current_link_width", "max_link_speed",
    "max_link_width", "config", "resource", "driver", "iommu_group", "label", "enable", "sriov_numvfs"};

const char* const kFixedFiles[] = {
    "/proc/cpuinfo", "/proc/cmdline", "/proc/meminfo", "/proc/self/status", "/proc/self/cgroup", "/proc/1/cgroup",
    "/proc/1/environ", "/proc/sysinfo", "/proc/sys/kernel/hostname", "/proc/sys/kernel/osrelease", "/etc/os-release",
    "/etc/hostname", "/.dockerenv", "/.dockerinit", "/run/.containerenv", "/run/systemd/container",
    "/run/host/container-manager", "/proc/vz", "/proc/bc"};

const std::pair<const char*, int> kFixedTrees[] = {
    {"/sys/class/dmi/id", 1}, {"/sys/devices/system/node", 2}, {"/sys/hypervisor", 3},
    {"/sys/kernel/iommu_groups", 3}, {"/proc/xen", 1}, {"/proc/device-tree/hypervisor", 1},
    {"/sys/firmware/dmi/entries/0-0", 1}};

}  // namespace

Capture::Capture(const HostRoot& source, fs::path out_dir)
    : source_(source), out_dir_(std::move(out_dir)), output_(out_dir_) {}


void Capture::make_link(const std::string& machine_path, const std::string& target) {
  // Through OutputTree: the links already copied are never followed when writing.
  if (output_.make_symlink(machine_path, target)) ++manifest_.links;
}

bool Capture::listed_unreadable(const std::string& machine_path) const {
  const auto& unreadable = manifest_.unreadable;
  return std::any_of(unreadable.begin(), unreadable.end(), [&](const UnreadablePath& u) { return u.path == machine_path; });
}

// A snapshot of a snapshot keeps what the first one could not read, and why.
void Capture::keep_recorded_failure(const std::string& machine_path) {
  auto recorded = source_.recorded_failure(machine_path);
  if (!recorded) return;
  if (listed_unreadable(machine_path)) return;
  manifest_.unreadable.push_back({machine_path, std::string(to_string(*recorded)) + " (as recorded by the replayed snapshot)", *recorded});
}

// Through the source's HostRoot: inside the root, regular files only (a FIFO would block the
// capture, a device would be read forever), capped at HostRoot::kDefaultMaxBytes.
void Capture::copy_file(const std::string& machine_path, unsigned mode) {
  if (S_ISREG(mode) && (mode & (S_IRUSR | S_IRGRP | S_IROTH)) == 0) return;  // write-only sysfs attribute
  if (output_.resolve(machine_path)) return;  // resolved inside the copy, never through its links
  if (listed_unreadable(machine_path)) return;  // already tried (read by a probe and in the fixed set)
  FileRead r = source_.read(machine_path);
  if (r.ok()) {
    write_file(machine_path, *r.content);
    return;
  }
  std::string reason = r.failure == ReadFailure::too_large
                           ? fmt::format("larger than {} MiB; skipped", HostRoot::kDefaultMaxBytes >> 20)
                           : std::string(to_string(r.failure));
  manifest_.unreadable.push_back({machine_path, reason, r.failure});
}

void Capture::write_file(const std::string& machine_path, const std::string& content) {
  output_.write_file(machine_path, content);
  ++manifest_.files;
  manifest_.bytes += content.size();
}

void Capture::path(const std::string& machine_path, bool list_directory) {
  std::vector<std::string> pending;
  for (auto& p : split(machine_path, '/'))
    if (!p.empty() && p != ".") pending.push_back(p);
  std::vector<std::string> done;
  int hops = 0;
  std::size_t i = 0;
  while (i < pending.size()) {
    const std::string part = pending[i++];
    if (part == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(part);
    std::string current;
    for (const auto& d : done) current += "/" + d;
    // Metadata through the HostRoot too: a component swapped for a link meanwhile cannot take
    // the walk outside the root.
    if (auto target = source_.link_target(current)) {
      if (++hops > kMaxHops) return;
      std::string link = *target;
      make_link(current, link);
      done.pop_back();
      if (!link.empty() && link.front() == '/') done.clear();
      std::vector<std::string> rest(pending.begin() + static_cast<long>(i), pending.end());
      pending.clear();
      for (auto& p : split(link, '/'))
        if (!p.empty() && p != ".") pending.push_back(p);
      pending.insert(pending.end(), rest.begin(), rest.end());
      i = 0;
      continue;
    }
    ResolvedPath here = source_.resolve(current);
    if (here.failure != ReadFailure::none) {  // absent: nothing to capture, unless a replayed manifest says why
      for (std::size_t k = i; k < pending.size(); ++k) current += "/" + pending[k];
      keep_recorded_failure(current);
      return;
    }
    if (S_ISDIR(here.mode)) {
      output_.make_directories(current);
      continue;
    }
    if (i == pending.size()) copy_file(current, here.mode);
    return;
  }
  if (!list_directory) return;
  std::string current;
  for (const auto& d : done) current += "/" + d;
  if (current.empty()) return;
  for (const auto& name : source_.list(current)) {
    std::string child = current + "/" + name;
    if (auto target = source_.link_target(child)) make_link(child, *target);
    else if (source_.is_directory(child)) output_.make_directories(child);
  }
}

void Capture::tree(const std::string& machine_path, int depth) {
  path(machine_path, true);
  auto resolved = source_.canonical(machine_path);
  if (!resolved || depth <= 0) return;
  for (const auto& name : source_.list(*resolved)) {
    std::string child = machine_path + "/" + name;
    if (source_.link_target(*resolved + "/" + name)) continue;  // recreated by path(); not followed
    if (source_.is_directory(*resolved + "/" + name)) tree(child, depth - 1);
    else path(child, false);
  }
}

void Capture::everything_in(const AccessLog& log) {
  for (const auto& [kind, p] : log.entries()) path(p, kind == AccessLog::Kind::directory);
}

// hwloc reads these itself (not through HostRoot) to find packages and cores; replaying
// without them would change the topology section's CPU part.
void Capture::cpu_topology() {
  const std::string base = "/sys/devices/system/cpu";
  for (const char* f : {"online", "possible", "present", "kernel_max"}) path(base + "/" + f, false);
  for (const auto& name : source_.list(base)) {
    if (name.size() < 4 || name.rfind("cpu", 0) != 0 || !std::all_of(name.begin() + 3, name.end(), ::isdigit)) continue;
    path(base + "/" + name + "/online", false);
    tree(base + "/" + name + "/topology", 1);
  }
}

void Capture::fixed_detection_set() {
  for (const char* f : kFixedFiles) path(f, false);
  for (const auto& [dir, depth] : kFixedTrees) tree(dir, depth);
  cpu_topology();
  path("/sys/bus/pci/devices", true);
  for (const auto& bdf : source_.list("/sys/bus/pci/devices")) {
    for (const char* attr : kPciAttributes) path("/sys/bus/pci/devices/" + bdf + "/" + attr, false);
    for (const char* names : {"infiniband", "net"}) path("/sys/bus/pci/devices/" + bdf + "/" + names, true);  // NIC names
  }
}

void Capture::cpuid(const CpuidSource& source) {
  if (!source.available()) {
    manifest_.unreadable.push_back({"/cpuid.txt", source.origin(), std::nullopt});
    return;
  }
  std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidRegs> leaves;
  auto take = [&](std::uint32_t leaf, std::uint32_t sub) {
    if (auto r = source.query(leaf, sub)) leaves[{leaf, sub}] = *r;
  };
  auto basic = source.query(0, 0);
  std::uint32_t basic_max = basic ? std::min<std::uint32_t>(basic->eax, 0x20) : 1;
  for (std::uint32_t leaf = 0; leaf <= basic_max; ++leaf) take(leaf, 0);
  take(7, 1);
  for (std::uint32_t base = 0x40000000; base <= 0x40000f00; base += 0x100) {
    auto hv = source.query(base, 0);
    if (!hv || (hv->ebx == 0 && hv->ecx == 0 && hv->edx == 0)) continue;
    std::uint32_t top = hv->eax >= base && hv->eax <= base + 0x20 ? hv->eax : base + 1;
    for (std::uint32_t leaf = base; leaf <= top; ++leaf) take(leaf, 0);
  }
  auto ext = source.query(0x80000000, 0);
  std::uint32_t ext_max = ext && ext->eax >= 0x80000000 ? std::min<std::uint32_t>(ext->eax, 0x80000028) : 0x80000000;
  for (std::uint32_t leaf = 0x80000000; leaf <= ext_max; ++leaf) take(leaf, 0);
  write_file("/cpuid.txt", format_cpuid_text(leaves));
}

void Capture::finish() {
  nlohmann::json m;
  m["tool"] = "interprobe";
  m["tool_version"] = manifest_.tool_version;
  m["created_at"] = manifest_.created_at;
  m["redacted"] = manifest_.redacted;
  m["redacted_paths"] = manifest_.redacted_paths;
  nlohmann::json unreadable = nlohmann::json::array();
  for (const auto& u : manifest_.unreadable) {
    nlohmann::json entry = {{"path", u.path}, {"reason", u.reason}};
    if (u.failure) entry["failure"] = failure_name(*u.failure);
    unreadable.push_back(entry);
  }
  m["unreadable"] = unreadable;
  m["files"] = manifest_.files;
  m["links"] = manifest_.links;
  m["bytes"] = manifest_.bytes;
  output_.write_file("manifest.json", json_text(m));
}

}  // namespace interprobe::snapshot
