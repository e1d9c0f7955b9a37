#include "support/hostile_tree.hpp"
#include "support/hostile_paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace interprobe::testing {

namespace fs = std::filesystem;
using namespace hostile;

namespace {

const fs::path kFixtures = INTERPROBE_FIXTURES;
const fs::path kBaseFixture = kFixtures / "topology" / "proxmox-q35-8gpu-rootports";
// Files the topology fixture lacks but the system and virtualization probes read.
const std::pair<fs::path, const char*> kOverlay[] = {
    {kFixtures / "virt" / "proxmox-kvm-q35", "cpuid.txt"},
    {kFixtures / "virt" / "proxmox-kvm-q35", "proc/self/cgroup"},
    {kFixtures / "virt" / "proxmox-kvm-q35", "proc/self/status"},
    {kFixtures / "virt" / "proxmox-kvm-q35", "proc/cmdline"},
    {kFixtures / "virt" / "proxmox-kvm-q35", "sys/class/dmi/id/chassis_vendor"},
    {kFixtures / "virt" / "proxmox-kvm-q35", "sys/class/dmi/id/product_version"},
    {kFixtures / "virt" / "proxmox-kvm-q35", "sys/class/dmi/id/bios_version"},
    {kFixtures / "virt" / "proxmox-kvm-q35", "sys/firmware"},
    {kFixtures / "minimal-kvm-guest", "proc/meminfo"},
    {kFixtures / "minimal-kvm-guest", "etc/os-release"},
    {kFixtures / "minimal-kvm-guest", "proc/sys/kernel/hostname"},
};

void write_text(const fs::path& file, const std::string& content) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + file.string());
}


// Regular files and directories only (the canary must hold no links of its own).
void copy_plain(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from)) {
    if (e.is_symlink()) continue;
    if (e.is_directory()) copy_plain(e.path(), to / e.path().filename());
    else if (e.is_regular_file()) fs::copy_file(e.path(), to / e.path().filename());
  }
}



}  // namespace

const char* family_name(HostileFamily family) {
  switch (family) {
    case HostileFamily::clean: return "Clean";
    case HostileFamily::absolute_links: return "AbsoluteLinks";
    case HostileFamily::dotdot_links: return "DotDotLinks";
    case HostileFamily::lexical_links: return "LexicalLinks";
    case HostileFamily::fifos: return "Fifos";
    case HostileFamily::char_devices: return "CharDevices";
    case HostileFamily::huge_files: return "HugeFiles";
    case HostileFamily::numbers: return "Numbers";
    case HostileFamily::control_chars: return "ControlChars";
    case HostileFamily::output_links: return "OutputLinks";
    case HostileFamily::output_temp_links: return "OutputTempLinks";
    case HostileFamily::archive_absolute_paths: return "ArchiveAbsolutePaths";
    case HostileFamily::archive_dotdot_paths: return "ArchiveDotDotPaths";
    case HostileFamily::archive_link_writes: return "ArchiveLinkWrites";
    case HostileFamily::archive_lexical_writes: return "ArchiveLexicalWrites";
    case HostileFamily::archive_hard_links: return "ArchiveHardLinks";
    case HostileFamily::all_in_one: return "AllInOne";
  }
  return "?";
}

std::vector<HostileFamily> all_hostile_families() {
  return {HostileFamily::clean,         HostileFamily::absolute_links, HostileFamily::dotdot_links,
          HostileFamily::lexical_links, HostileFamily::fifos,          HostileFamily::char_devices,
          HostileFamily::huge_files,    HostileFamily::numbers,        HostileFamily::control_chars,
          HostileFamily::output_links,  HostileFamily::output_temp_links, HostileFamily::archive_absolute_paths,
          HostileFamily::archive_dotdot_paths, HostileFamily::archive_link_writes, HostileFamily::archive_lexical_writes,
          HostileFamily::archive_hard_links, HostileFamily::all_in_one};
}

bool family_applies_to_tree(HostileFamily family) {
  return family != HostileFamily::archive_absolute_paths && family != HostileFamily::archive_dotdot_paths &&
         family != HostileFamily::archive_link_writes && family != HostileFamily::archive_lexical_writes &&
         family != HostileFamily::archive_hard_links;
}

HostileSandbox::HostileSandbox(HostileFamily family) : family_(family) {
  char pattern[] = "/tmp/interprobe-hostile-XXXXXX";
  if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
  outer_ = pattern;
  try {
    for (const auto& d : {root(), canary(), out(), tmp()}) fs::create_directories(d);
    copy_base_tree();
    make_canary();
    if (family == HostileFamily::all_in_one) {
      // Order decides collisions: links last, so they replace files planted before them.
      for (auto f : {HostileFamily::huge_files, HostileFamily::numbers, HostileFamily::control_chars,
                     HostileFamily::char_devices, HostileFamily::fifos, HostileFamily::lexical_links,
                     HostileFamily::dotdot_links, HostileFamily::absolute_links})
        plant(f);
    } else {
      plant(family);
    }
  } catch (...) {
    std::error_code ec;
    fs::remove_all(outer_, ec);
    throw;
  }
}

HostileSandbox::~HostileSandbox() {
  if (const char* keep = std::getenv("INTERPROBE_HOSTILE_KEEP"); keep && *keep == '1') {
    std::fprintf(stderr, "  [hostile] kept %s\n", outer_.c_str());  // to replay a case by hand
    return;
  }
  std::error_code ec;
  fs::remove_all(outer_, ec);  // links are removed, not followed
}

void HostileSandbox::copy_base_tree() {
  fs::copy(kBaseFixture, root(), fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  for (const auto& [fixture, rel] : kOverlay) {
    fs::path to = root() / rel;
    if (fs::exists(to)) continue;
    fs::create_directories(to.parent_path());
    fs::copy(fixture / rel, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  write_text(root() / "proc/mounts", "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
                                     "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n");
}

void HostileSandbox::make_canary() {
  // Plausible contents, so a probe that follows a link reads (and opens) real-looking files.
  copy_plain(root() / kDmi, canary() / "dmi");
  write_text(canary() / "dmi/product_serial", "CANARY-SERIAL\n");
  copy_plain(root() / kCpu / "cpu0/topology", canary() / "topology");
  write_text(canary() / "topology/physical_package_id", "77\n");
  copy_plain(root() / kCpu / "cpu3", canary() / "cpu3");
  copy_plain(root() / kGpu, canary() / "pcidev");
  copy_plain(root() / kNode0, canary() / "node0");
  copy_plain(root() / "proc/self", canary() / "self");
  for (const auto& [name, from] : std::vector<std::pair<std::string, std::string>>{
           {"cpuinfo", "proc/cpuinfo"}, {"meminfo", "proc/meminfo"}, {"mounts", "proc/mounts"},
           {"cmdline", "proc/cmdline"}, {"os-release", "etc/os-release"}, {"cpuid.txt", "cpuid.txt"},
           {"FACP", "sys/firmware/acpi/tables/FACP"}, {"distance", kNode0 + "/distance"}})
    fs::copy_file(root() / from, canary() / name);
  write_text(canary() / "victim-output", "CANARY-VICTIM\n");
  write_text(canary() / "victim-tmp", "CANARY-VICTIM\n");
  fs::create_directories(canary() / "empty");
}

std::string HostileSandbox::absolute_target(const std::string& what) const { return (canary() / what).string(); }

std::string HostileSandbox::dotdot_target(const std::string& what) const {
  // Climbs far past the root (".." stops at "/"), then down to the canary: lands there from
  // any directory, the tree's and an extracted archive's alike.
  return ups(40) + (canary() / what).string().substr(1);
}

std::string HostileSandbox::lexical_target(const std::string& link, const std::string& what) const {
  // Back to the root, then through up12 (= root/../../..., built from links): normalized as
  // text the target stays inside the root; followed, it reaches "/" and the canary.
  const fs::path parent = fs::path(link).parent_path();
  auto parent_depth = static_cast<std::size_t>(std::distance(parent.begin(), parent.end()));
  return ups(parent_depth) + "up" + std::to_string(kLexicalChain) + "/" + (canary() / what).string().substr(1);
}

bool HostileSandbox::clear_for_plant(const std::string& rel) {
  fs::path at = root();
  for (const auto& part : fs::path(rel).parent_path()) {
    at /= part;
    if (fs::is_symlink(at)) {  // never create anything through a link (it may lead to the canary)
      planted_.push_back("skipped " + rel + ": " + at.lexically_relative(root()).string() + " is a link already");
      return false;
    }
  }
  fs::create_directories((root() / rel).parent_path());
  fs::path target = root() / rel;
  // What is replaced is no longer planted.
  std::erase_if(escaping_, [&](const fs::path& p) {
    auto inside = p.lexically_relative(target);
    return !inside.empty() && *inside.begin() != "..";
  });
  std::error_code ec;
  if (fs::is_symlink(target, ec)) fs::remove(target);
  else if (fs::is_directory(target, ec)) fs::remove_all(target);
  else fs::remove(target, ec);
  return true;
}

void HostileSandbox::plant_symlink(const std::string& rel, const std::string& target, bool escapes,
                                   const std::string& why) {
  if (!clear_for_plant(rel)) return;
  fs::create_symlink(target, root() / rel);
  std::string shown = target;  // "../../../.." x40 in a message says nothing
  if (auto at = shown.find(ups(8)); at != std::string::npos) {
    auto end = shown.find_first_not_of("./", at);
    shown.replace(at, end - at, "(../ x" + std::to_string((end - at) / 3) + ")");
  }
  planted_.push_back(why + " " + rel + " -> " + shown);
  if (escapes) escaping_.push_back(root() / rel);
}

void HostileSandbox::plant_file(const std::string& rel, const std::string& content, const std::string& why) {
  if (!clear_for_plant(rel)) return;
  write_text(root() / rel, content);
  planted_.push_back(why + " " + rel);
}

void HostileSandbox::plant_sparse(const std::string& rel, const std::string& prefix, unsigned long long size,
                                  const std::string& why) {
  if (!clear_for_plant(rel)) return;
  int fd = ::open((root() / rel).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + rel);
  bool ok = ::write(fd, prefix.data(), prefix.size()) == static_cast<ssize_t>(prefix.size()) &&
            ::ftruncate(fd, static_cast<off_t>(size)) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot make sparse " + rel);
  planted_.push_back(why + " " + rel + " (" + std::to_string(size >> 20) + " MiB sparse)");
}

void HostileSandbox::plant_fifo(const std::string& rel) {
  if (!clear_for_plant(rel)) return;
  if (::mkfifo((root() / rel).c_str(), 0644) != 0) throw std::runtime_error("mkfifo " + rel + ": " + std::strerror(errno));
  planted_.push_back("fifo " + rel);
}

void HostileSandbox::plant_char_device(const std::string& rel, unsigned major, unsigned minor,
                                       const std::string& fallback) {
  if (!clear_for_plant(rel)) return;
  if (::mknod((root() / rel).c_str(), S_IFCHR | 0444, makedev(major, minor)) == 0) {
    planted_.push_back("char device " + std::to_string(major) + ":" + std::to_string(minor) + " " + rel);
    return;
  }
  // Unprivileged: the nearest thing is a link to the host's device.
  fs::create_symlink(fallback, root() / rel);
  planted_.push_back("link to " + fallback + " (mknod not permitted) " + rel);
}

void HostileSandbox::build_archive() { write_hostile_archive(root(), archive_extras_, archive()); }

void HostileSandbox::plant_output_links(const std::string& output_name, int pid) const {
  auto link = [&](const std::string& name, const fs::path& victim) {
    std::error_code ec;
    fs::create_symlink(victim, out() / name, ec);
  };
  if (family_ == HostileFamily::output_links) link(output_name, output_victim());
  if (family_ != HostileFamily::output_temp_links && family_ != HostileFamily::all_in_one) return;
  link(output_name + ".tmp." + std::to_string(pid), canary() / "victim-tmp");
  link("." + output_name + ".tmp." + std::to_string(pid), canary() / "victim-tmp");
}

}  // namespace interprobe::testing
