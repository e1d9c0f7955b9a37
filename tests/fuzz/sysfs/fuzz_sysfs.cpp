// sysfs and procfs files as a hostile tree serves them. The first byte picks the reader, the rest
// is the content:
//   0 a cpulist ("0-3,8"): a list that parses formats and parses back to the same CPUs
//   1 PCIe link speed and width strings, and the label and bandwidth computed from them
//   2 numbers as attributes hold them (hex ids, integers, doubles, "key: value" fields) and sizes
//     as options take them ("64K")
//   3 /proc/meminfo and /proc/cpuinfo through the system probe
//   4 cpu/online and a NUMA node's cpulist, meminfo and distance through the CPU topology reader
//   5 one PCI function, one attribute a line (vendor, device, class, numa_node, local_cpulist,
//     current/max link speed and width) through the PCI inventory
//   6 a PCI bridge's config space through the inventory's capability walk
// Readers return nulls and warnings on garbage; only InputError may leave them.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "probes/host/system_probe.hpp"
#include "probes/topology/cpu_numa.hpp"
#include "probes/topology/pci_inventory.hpp"
#include "probes/topology/pci_link.hpp"
#include "support/temp_tree.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

using namespace interprobe;

constexpr const char* kDevice = "/sys/devices/pci0000:00/0000:00:01.0";

// One tree for the whole run; every input rewrites the files it needs in place (a new inode per
// write is ext4's slow path: 20 ms a run; run-fuzzers also puts TMPDIR on tmpfs).
const testing::TempTree& tree() {
  static const testing::TempTree scratch;
  static const bool made = [] {
    std::filesystem::create_directories(scratch.at(kDevice));
    std::filesystem::create_directories(scratch.at("/sys/bus/pci/devices"));
    scratch.relink("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
    return true;
  }();
  (void)made;
  return scratch;
}

void write_machine_file(const std::string& machine_path, const std::string& content) {
  auto file = tree().at(machine_path);
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary | std::ios::trunc) << content;
}

void fuzz_cpulist(const std::string& text) {
  auto cpus = parse_cpulist(text);
  if (!cpus) return;
  auto again = parse_cpulist(format_cpulist(*cpus));
  fuzz::fuzz_require(again && *again == *cpus, "format_cpulist output parses back to the same CPUs");
}

void fuzz_link(const std::string& text) {
  report::PciLink link;
  link.current_gts = parse_link_speed_gts(text).value;
  link.max_gts = link.current_gts;
  link.current_lanes = parse_link_width(text).value;
  link.max_lanes = link.current_lanes;
  complete_link(link);
  if (link.current_gts) (void)pcie_generation(*link.current_gts);
}

void fuzz_numbers(const std::string& text) {
  (void)parse_hex(text);
  (void)parse_int(text);
  (void)parse_double(text);
  (void)find_field(text, "MemTotal", ':');
  (void)find_field(text, "ID", '=');
  try {
    auto bytes = parse_size_bytes(text, "--max");
    (void)format_bytes(bytes);
    fuzz::fuzz_require(parse_size_bytes(format_size_label(bytes), "label") == bytes,
                       "format_size_label output parses back to the same size");
  } catch (const InputError&) {
  }
}

void fuzz_pci_device(const std::string& text) {
  static const char* const kAttributes[] = {"vendor", "device", "class", "numa_node", "local_cpulist",
                                            "current_link_speed", "current_link_width", "max_link_speed",
                                            "max_link_width"};
  auto lines = split(text, '\n');
  for (std::size_t i = 0; i < std::size(kAttributes); ++i)
    write_machine_file(std::string(kDevice) + "/" + kAttributes[i], i < lines.size() ? lines[i] : "");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 7) {
      case 0: fuzz_cpulist(text); break;
      case 1: fuzz_link(text); break;
      case 2: fuzz_numbers(text); break;
      case 3:
        write_machine_file("/proc/meminfo", text);
        write_machine_file("/proc/cpuinfo", text);
        (void)read_system(HostRoot(tree().path()));
        break;
      case 4: {
        for (const char* file : {"/sys/devices/system/cpu/online", "/sys/devices/system/node/node0/cpulist",
                                 "/sys/devices/system/node/node0/meminfo", "/sys/devices/system/node/node0/distance"})
          write_machine_file(file, text);
        std::vector<std::string> warnings;
        (void)read_cpu_topology(HostRoot(tree().path()), warnings);
        break;
      }
      case 5:
        fuzz_pci_device(text);
        write_machine_file(std::string(kDevice) + "/config", "");
        (void)read_pci_inventory(HostRoot(tree().path()));
        break;
      default:
        fuzz_pci_device("0x8086\n0x1234\n0x060400");
        write_machine_file(std::string(kDevice) + "/config", text);
        (void)read_pci_inventory(HostRoot(tree().path()));
        break;
    }
  } catch (const InputError&) {
  }
  return 0;
}
