#include "probes/topology/cpu_numa.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/host_root.hpp"
#include "common/text.hpp"

namespace interprobe {

namespace {

constexpr int kMaxCpuIndex = 1 << 16;

std::optional<int> numbered_entry(const std::string& name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  auto n = parse_int(std::string_view(name).substr(prefix.size()));
  if (!n || *n < 0 || *n >= kMaxCpuIndex) return std::nullopt;
  return static_cast<int>(*n);
}

std::optional<std::int64_t> node_memory_bytes(const std::string& meminfo) {
  // "Node 0 MemTotal:       131860388 kB"
  for (const auto& line : split(meminfo, '\n')) {
    auto pos = line.find("MemTotal:");
    if (pos == std::string::npos) continue;
    return parse_kib_as_bytes(std::string_view(line).substr(pos + 9));
  }
  return std::nullopt;
}

void read_numa_nodes(const HostRoot& root, report::CpuTopology& cpu, std::vector<std::string>& warnings) {
  const std::string base = "/sys/devices/system/node";
  std::vector<int> ids;
  for (const auto& name : root.list(base))
    if (auto id = numbered_entry(name, "node")) ids.push_back(*id);
  std::sort(ids.begin(), ids.end());
  for (int id : ids) {
    report::NumaNode node;
    node.id = id;
    std::string dir = fmt::format("{}/node{}", base, id);
    if (auto text = root.read_text(dir + "/cpulist")) {
      std::string why;
      if (parse_cpulist(*text, &why)) node.cpus = *text;
      else warnings.push_back(fmt::format("{}/cpulist: garbage ({}); ignored", dir, why));
    }
    if (auto meminfo = root.read(dir + "/meminfo"); meminfo.ok()) {
      node.memory_bytes = node_memory_bytes(*meminfo.content);
      if (!node.memory_bytes) warnings.push_back(fmt::format("{}/meminfo: no MemTotal line", dir));
    }
    if (auto distance = root.read_text(dir + "/distance")) {
      for (const auto& word : split_whitespace(*distance)) {
        auto d = parse_int(word);
        if (!d || *d < 0 || *d > 255) {
          warnings.push_back(fmt::format("{}/distance: garbage '{}'", dir, distance->substr(0, 40)));
          node.distances.clear();
          break;
        }
        node.distances.push_back(static_cast<int>(*d));
      }
    }
    cpu.numa_nodes.push_back(std::move(node));
  }
  for (auto& node : cpu.numa_nodes) {
    if (!node.distances.empty() && node.distances.size() != cpu.numa_nodes.size()) {
      warnings.push_back(fmt::format("{}/node{}/distance: {} values for {} nodes; ignored", base, node.id,
                                     node.distances.size(), cpu.numa_nodes.size()));
      node.distances.clear();
    }
  }
}

std::optional<std::string> first_cpu_model(const HostRoot& root) {
  auto cpuinfo = root.read("/proc/cpuinfo");
  if (!cpuinfo.ok()) return std::nullopt;
  auto model = find_field(*cpuinfo.content, "model name", ':');
  if (model) model = std::string(trim(*model));
  return model;
}

// Fallback without hwloc: physical_package_id and core_id of every CPU.
void read_packages_from_sysfs(const HostRoot& root, report::CpuTopology& cpu) {
  const std::string base = "/sys/devices/system/cpu";
  std::map<int, std::set<int>> package_cpus;
  std::set<std::pair<int, int>> cores;
  for (const auto& name : root.list(base)) {
    auto id = numbered_entry(name, "cpu");
    if (!id) continue;
    auto package = root.read_text(fmt::format("{}/cpu{}/topology/physical_package_id", base, *id));
    auto core = root.read_text(fmt::format("{}/cpu{}/topology/core_id", base, *id));
    auto p = package ? parse_int(*package) : std::nullopt;
    if (!p || *p < 0 || *p >= kMaxCpuIndex) continue;
    package_cpus[static_cast<int>(*p)].insert(*id);
    if (auto c = core ? parse_int(*core) : std::nullopt; c && *c >= 0 && *c < kMaxCpuIndex)
      cores.emplace(static_cast<int>(*p), static_cast<int>(*c));
  }
  if (package_cpus.empty()) return;
  auto model = first_cpu_model(root);
  for (const auto& [id, cpus] : package_cpus) {
    report::CpuPackage package;
    package.id = id;
    package.cpus = format_cpulist(cpus);
    package.model = model;
    cpu.packages.push_back(std::move(package));
  }
  if (!cores.empty()) cpu.cores = static_cast<int>(cores.size());
  cpu.packages_source = report::PackagesSource::sysfs;
}

}  // namespace

std::optional<std::set<int>> parse_cpulist(std::string_view text, std::string* why) {
  auto bad = [&](std::string reason) -> std::optional<std::set<int>> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  // Ranges first, merged, then the set: linear in the text plus the CPUs, however often a
  // hostile list repeats "0-65535".
  std::vector<std::pair<int, int>> ranges;
  text = trim(text);
  std::size_t start = 0;
  while (!text.empty() && start <= text.size()) {
    std::size_t comma = text.find(',', start);
    std::string_view piece = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    auto dash = piece.find('-');
    auto first = parse_int(piece.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : parse_int(piece.substr(dash + 1));
    if (!first || !last || *first < 0 || *last < *first)
      return bad(fmt::format("'{}' is not a CPU or a range of CPUs", std::string(piece.substr(0, 40))));
    if (*last >= kMaxCpuIndex)
      return bad(fmt::format("CPU {} is beyond the limit of {} CPUs", *last, kMaxCpuIndex));
    ranges.emplace_back(static_cast<int>(*first), static_cast<int>(*last));
  }
  std::sort(ranges.begin(), ranges.end());
  std::set<int> cpus;
  int next = 0;  // CPUs below it are in the set already
  for (auto [first, last] : ranges) {
    for (int c = std::max(first, next); c <= last; ++c) cpus.emplace_hint(cpus.end(), c);
    next = std::max(next, last + 1);
  }
  return cpus;
}

std::string format_cpulist(const std::set<int>& cpus) {
  std::string out;
  auto it = cpus.begin();
  while (it != cpus.end()) {
    int first = *it, last = *it;
    while (++it != cpus.end() && *it == last + 1) last = *it;
    if (!out.empty()) out += ",";
    out += first == last ? std::to_string(first) : fmt::format("{}-{}", first, last);
  }
  return out;
}

void attach_numa_nodes_to_packages(report::CpuTopology& cpu) {
  for (auto& package : cpu.packages) {
    package.numa_nodes.clear();
    auto package_cpus = package.cpus ? parse_cpulist(*package.cpus) : std::nullopt;
    if (!package_cpus) continue;
    for (const auto& node : cpu.numa_nodes) {
      auto node_cpus = node.cpus ? parse_cpulist(*node.cpus) : std::nullopt;
      if (!node_cpus) continue;
      bool overlaps = std::any_of(node_cpus->begin(), node_cpus->end(), [&](int c) { return package_cpus->count(c) > 0; });
      if (overlaps) package.numa_nodes.push_back(node.id);
    }
  }
}

report::CpuTopology read_cpu_topology(const HostRoot& root, std::vector<std::string>& warnings) {
  report::CpuTopology cpu;
  if (auto online = root.read_text("/sys/devices/system/cpu/online")) {
    std::string why;
    if (auto cpus = parse_cpulist(*online, &why)) cpu.logical_cpus = static_cast<int>(cpus->size());
    else warnings.push_back(fmt::format("/sys/devices/system/cpu/online: garbage ({}); ignored", why));
  }
  read_numa_nodes(root, cpu, warnings);
  std::string hwloc_reason;
  if (!read_packages_with_hwloc(root, cpu, &hwloc_reason)) {
    // A tree hwloc could leave or stall on is worth a warning even when sysfs fills the gap.
    if (hwloc_reason.rfind("hwloc was not given", 0) == 0) warnings.push_back(hwloc_reason);
    read_packages_from_sysfs(root, cpu);
    if (cpu.packages.empty()) warnings.push_back("CPU packages unknown: " + hwloc_reason + "; no cpu*/topology in sysfs either");
  }
  attach_numa_nodes_to_packages(cpu);
  return cpu;
}

}  // namespace interprobe
