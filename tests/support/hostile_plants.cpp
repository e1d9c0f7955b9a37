// The plants of each hostile family (see hostile_tree.hpp for what each family is for).
#include <algorithm>
#include <string>
#include <vector>

#include "support/hostile_paths.hpp"
#include "support/hostile_tree.hpp"

namespace interprobe::testing {

namespace fs = std::filesystem;
using namespace hostile;

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
    case HostileFamily::archive_absolute_paths:
    case HostileFamily::archive_dotdot_paths:
    case HostileFamily::archive_link_writes:
    case HostileFamily::archive_lexical_writes:
    case HostileFamily::archive_hard_links: plant_archive_escape(family); break;
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

void HostileSandbox::plant_archive_escape(HostileFamily family) {
  // One kind per family: a validator stops at the first refused entry, so kinds mixed in one
  // archive would hide each other.
  std::string canary_rel = canary().string().substr(1);
  std::string up = "up" + std::to_string(kLexicalChain);
  using K = ArchiveEntry::Kind;
  if (family == HostileFamily::archive_absolute_paths) {
    archive_extras_ = {{K::file, canary().string() + "/escape-absolute", "", "written through an absolute entry\n"}};
  } else if (family == HostileFamily::archive_dotdot_paths) {
    archive_extras_ = {{K::file, ups(12) + canary_rel + "/escape-dotdot", "", "written through a '..' entry\n"}};
  } else if (family == HostileFamily::archive_link_writes) {
    archive_extras_ = {{K::symlink, "sys/class/dmi/idx", canary().string() + "/dmi", ""},
                       {K::file, "sys/class/dmi/idx/product_name", "", "overwritten through an absolute link\n"},
                       {K::symlink, "sys/dotdot", ups(12) + canary_rel, ""},
                       {K::file, "sys/dotdot/victim-output", "", "overwritten through a '..' link\n"}};
  } else if (family == HostileFamily::archive_lexical_writes) {
    archive_extras_ = {{K::symlink, "x", ".", ""}, {K::symlink, "up", "x/..", ""}};
    for (int i = 2; i <= kLexicalChain; ++i)
      archive_extras_.push_back(
          {K::symlink, "up" + std::to_string(i), (i == 2 ? "up" : "up" + std::to_string(i - 1)) + "/..", ""});
    archive_extras_.push_back({K::file, up + "/" + canary_rel + "/escape-lexical", "", "written through a chain\n"});
    archive_extras_.push_back({K::symlink, "sys/lex", "../" + up + "/" + canary_rel + "/dmi", ""});
    archive_extras_.push_back({K::file, "sys/lex/sys_vendor", "", "overwritten through a lexical link\n"});
  } else {
    archive_extras_ = {{K::hardlink, "proc/cpuinfo-hard", canary().string() + "/cpuinfo", ""},
                       {K::hardlink, "proc/victim-hard", ups(12) + canary_rel + "/victim-output", ""},
                       {K::file, "proc/victim-hard", "", "overwritten through a hard link\n"}};
  }
  for (const auto& e : archive_extras_) planted_.push_back("archive entry " + e.path + (e.target.empty() ? "" : " -> " + e.target));
}

}  // namespace interprobe::testing
