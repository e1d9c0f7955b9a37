#include "support/hostile_tree.hpp"

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

const std::string kGpu = "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0";
const std::string kNode0 = "sys/devices/system/node/node0";
const std::string kCpu = "sys/devices/system/cpu";
const std::string kDmi = "sys/class/dmi/id";
constexpr unsigned long long kHugeBytes = 4ull << 30;
constexpr int kLexicalChain = 12;  // up12 is 12 levels above the root: "/" from any depth used here

// Terminal attacks: OSC title, BEL, C1 CSI as UTF-8 and as a raw byte (split literals: "\x9b31"
// would be one hex escape).
const std::string kEvilName = "Evil\x1b]0;pwned\x07VM\xc2\x9b" "31m\x9b" "32mX";

void write_text(const fs::path& file, const std::string& content) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
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

std::string ups(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += "../";
  return s;
}

std::string cpulist_of(std::size_t ranges) {
  std::string s;
  for (std::size_t i = 0; i < ranges; ++i) s += (i ? "," : "") + std::to_string(2 * i);
  return s + "\n";
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
    case HostileFamily::archive_escape: return "ArchiveEscape";
    case HostileFamily::all_in_one: return "AllInOne";
  }
  return "?";
}

std::vector<HostileFamily> all_hostile_families() {
  return {HostileFamily::clean,         HostileFamily::absolute_links, HostileFamily::dotdot_links,
          HostileFamily::lexical_links, HostileFamily::fifos,          HostileFamily::char_devices,
          HostileFamily::huge_files,    HostileFamily::numbers,        HostileFamily::control_chars,
          HostileFamily::output_links,  HostileFamily::output_temp_links, HostileFamily::archive_escape,
          HostileFamily::all_in_one};
}

bool family_applies_to_tree(HostileFamily family) { return family != HostileFamily::archive_escape; }

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

void HostileSandbox::plant(HostileFamily family) {
  switch (family) {
    case HostileFamily::absolute_links:
    case HostileFamily::dotdot_links:
    case HostileFamily::lexical_links: plant_links(family); break;
    case HostileFamily::fifos:
    case HostileFamily::char_devices:
    case HostileFamily::huge_files: plant_special_files(family); break;
    case HostileFamily::numbers:
    case HostileFamily::control_chars: plant_numbers_and_strings(family); break;
    case HostileFamily::archive_escape: plant_archive_escape(); break;
    case HostileFamily::clean:
    case HostileFamily::output_links:
    case HostileFamily::output_temp_links:
    case HostileFamily::all_in_one: break;
  }
}

void HostileSandbox::plant_links(HostileFamily family) {
  std::vector<std::string> devices;
  for (const auto& e : fs::directory_iterator(root() / "sys/bus/pci/devices")) devices.push_back(e.path().filename());
  std::sort(devices.begin(), devices.end());
  auto device = [&](std::size_t i) { return "sys/bus/pci/devices/" + devices.at(i % devices.size()); };
  if (family == HostileFamily::absolute_links) {
    for (const auto& [link, what] : std::vector<std::pair<std::string, std::string>>{
             {kDmi, "dmi"}, {kCpu + "/cpu0/topology", "topology"}, {device(0), "pcidev"},
             {"proc/cpuinfo", "cpuinfo"}, {"cpuid.txt", "cpuid.txt"}, {kNode0 + "/distance", "distance"},
             {"proc/self", "self"}})
      plant_symlink(link, absolute_target(what), true, "absolute link");
  } else if (family == HostileFamily::dotdot_links) {
    for (const auto& [link, what] : std::vector<std::pair<std::string, std::string>>{
             {kCpu + "/cpu1/topology", "topology"}, {device(1), "pcidev"}, {"proc/meminfo", "meminfo"},
             {"sys/firmware/acpi/tables/FACP", "FACP"}, {"etc/os-release", "os-release"},
             {"proc/mounts", "mounts"}, {kDmi + "/sys_vendor", "dmi/sys_vendor"}})
      plant_symlink(link, dotdot_target(what), true, "'..' link");
  } else {
    plant_symlink("x", ".", false, "lexical chain");
    plant_symlink("up", "x/..", false, "lexical chain");
    for (int i = 2; i <= kLexicalChain; ++i)
      plant_symlink("up" + std::to_string(i), (i == 2 ? "up" : "up" + std::to_string(i - 1)) + "/..", false,
                    "lexical chain");
    // Only where hwloc and libpci read and interprobe's own reader does not: its refusal of a
    // path that climbs out (exit 2) must not end the run before the libraries had their turn.
    for (const auto& [link, what] : std::vector<std::pair<std::string, std::string>>{
             {kCpu + "/cpu2/topology", "topology"}, {kCpu + "/cpu3", "cpu3"}, {device(2), "pcidev"}})
      plant_symlink(link, lexical_target(link, what), true, "lexically-inside link");
  }
}

void HostileSandbox::plant_special_files(HostileFamily family) {
  if (family == HostileFamily::fifos) {
    for (const auto& rel : {kDmi + "/product_name", kGpu + "/numa_node", std::string("cpuid.txt"),
                            std::string("nvml.json"), kNode0 + "/cpulist", kCpu + "/online",
                            std::string("proc/self/cgroup"), kGpu + "/local_cpulist"})
      plant_fifo(rel);
  } else if (family == HostileFamily::char_devices) {
    plant_char_device("proc/cpuinfo", 1, 5, "/dev/zero");
    plant_char_device("proc/mounts", 1, 5, "/dev/zero");
    plant_char_device(kCpu + "/online", 1, 5, "/dev/zero");
    plant_char_device("proc/meminfo", 1, 9, "/dev/urandom");
    plant_char_device(kGpu + "/config", 1, 5, "/dev/zero");
    plant_char_device(kDmi + "/sys_vendor", 1, 9, "/dev/urandom");
  } else {
    std::string config = read_text(root() / kGpu / "config");
    plant_sparse("proc/meminfo", "MemTotal:       16384 kB\n", kHugeBytes, "huge");
    plant_sparse(kCpu + "/online", "0-15", kHugeBytes, "huge");
    plant_sparse(kDmi + "/product_name", "", kHugeBytes, "huge");
    plant_sparse(kGpu + "/config", config, kHugeBytes, "huge");
    plant_sparse("proc/cpuinfo", "processor\t: 0\n", kHugeBytes, "huge");
    // Paths no other family plants, so that AllInOne keeps huge files too.
    plant_sparse(kNode0 + "/meminfo", "Node 0 MemTotal:       16384 kB\n", kHugeBytes, "huge");
    plant_sparse(kGpu + "/resource", "", kHugeBytes, "huge");
    plant_file(kNode0 + "/cpulist", cpulist_of(100000), "100,000 ranges");
    plant_file(kCpu + "/present", cpulist_of(100000), "100,000 ranges");
    std::string cpuid = read_text(root() / "cpuid.txt");
    for (unsigned i = 0; i < 100000; ++i) cpuid += "0x80000001 0x0 0x00000000 0x00000000 0x00000000 0x00000000\n";
    plant_file("cpuid.txt", cpuid, "100,000 leaves");
  }
}

void HostileSandbox::plant_numbers_and_strings(HostileFamily family) {
  if (family == HostileFamily::numbers) {
    plant_file("proc/meminfo", "MemTotal:       18014398509481984 kB\nMemAvailable:   18446744073709551615 kB\n",
               "overflowing");
    plant_file(kGpu + "/numa_node", "99999999999999999999\n", "overflowing");
    plant_file(kGpu + "/current_link_width", "4294967297\n", "overflowing");
    plant_file(kGpu + "/max_link_speed", "1e309 GT/s PCIe\n", "overflowing");
    plant_file(kGpu + "/current_link_speed", "-32 GT/s PCIe\n", "negative");
    plant_file(kNode0 + "/cpulist", "0-18446744073709551615\n", "overflowing");
    plant_file(kCpu + "/online", "0-4294967295\n", "4 billion cpus");
    plant_file(kNode0 + "/distance", "10 99999999999999999999\n", "overflowing");
    plant_file(kGpu + "/local_cpulist", "4294967295\n", "overflowing");
    return;
  }
  plant_file(kDmi + "/product_name", kEvilName + "\n", "control characters");
  plant_file(kDmi + "/sys_vendor", "\x1b[2J\x9b" "31mVendor\n", "control characters");
  plant_file("proc/sys/kernel/hostname", "host\x1b[31m\xc2\x9d" "0;pwned\x07\n", "control characters");
  plant_file("proc/cpuinfo",
             "processor\t: 0\nvendor_id\t: Genuine\x1b[31mIntel\nmodel name\t: " + kEvilName + "\nflags\t\t: fpu\n\n",
             "control characters");
  plant_file("cpuid.txt", read_text(root() / "cpuid.txt") + "0x40000000 0x0 0x4000\x1b]0;pwned\x07 0x0 0x0 0x0\n",
             "control characters in a malformed field");
  plant_symlink("sys/bus/pci/devices/0000:00:1f.\x1b[2J", "../../../devices/pci0000:00/0000:00:12.0", false,
                "control characters in a name");
  plant_symlink(kGpu + "/driver", "../../../../bus/pci/drivers/nv\x1b]0;pwned\x07idia", false,
                "control characters in a driver name");
}

void HostileSandbox::plant_archive_escape() {
  std::string canary_rel = canary().string().substr(1);
  using K = ArchiveEntry::Kind;
  archive_extras_ = {
      {K::file, canary().string() + "/escape-absolute", "", "written through an absolute entry\n"},
      {K::file, ups(12) + canary_rel + "/escape-dotdot", "", "written through a '..' entry\n"},
      {K::symlink, "sys/class/dmi/idx", canary().string() + "/dmi", ""},
      {K::file, "sys/class/dmi/idx/product_name", "", "overwritten through an absolute link\n"},
      {K::symlink, "x", ".", ""},
      {K::symlink, "up", "x/..", ""},
  };
  for (int i = 2; i <= kLexicalChain; ++i)
    archive_extras_.push_back(
        {K::symlink, "up" + std::to_string(i), (i == 2 ? "up" : "up" + std::to_string(i - 1)) + "/..", ""});
  std::string up = "up" + std::to_string(kLexicalChain);
  archive_extras_.push_back({K::file, up + "/" + canary_rel + "/escape-lexical", "", "written through a chain\n"});
  archive_extras_.push_back({K::symlink, "sys/lex", "../" + up + "/" + canary_rel + "/dmi", ""});
  archive_extras_.push_back({K::file, "sys/lex/sys_vendor", "", "overwritten through a lexical link\n"});
  archive_extras_.push_back({K::hardlink, "proc/cpuinfo-hard", canary().string() + "/cpuinfo", ""});
  archive_extras_.push_back({K::hardlink, "proc/victim-hard", ups(12) + canary_rel + "/victim-output", ""});
  archive_extras_.push_back({K::file, "proc/victim-hard", "", "overwritten through a hard link\n"});
  for (const auto& e : archive_extras_) planted_.push_back("archive entry " + e.path + (e.target.empty() ? "" : " -> " + e.target));
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
