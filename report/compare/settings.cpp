// What compare's settings/topology diff reads of a report: the conditions a number ran under
// (hypervisor, passthrough, IOMMU, P2P, NUMA, links, library versions) and the verdicts that
// follow from them. Flat "name -> text" pairs so any two reports diff the same way.
#include <fmt/format.h>

#include "common/units.hpp"
#include "report/compare/compare.hpp"

namespace interprobe::compare {

namespace {

using Settings = std::vector<std::pair<std::string, std::string>>;

template <class T>
std::string text_of(const std::optional<T>& v) {
  if (!v) return "-";
  if constexpr (std::is_same_v<T, std::string>) return *v;
  else if constexpr (std::is_same_v<T, bool>) return *v ? "yes" : "no";
  else if constexpr (std::is_arithmetic_v<T>) return fmt::format("{}", *v);
  else return report::to_string(*v);
}

void add_tool(const report::Report& r, Settings& s) {
  s.emplace_back("tool/version", r.tool.version);
  s.emplace_back("host/kernel", text_of(r.host.kernel));
  s.emplace_back("host/live", r.host.live ? "yes" : "no");
  for (const auto& [name, lib] : r.tool.libraries) {
    std::string at = "libraries/" + name;
    s.emplace_back(at + "/version", lib.found ? text_of(lib.version) : "not found");
    if (lib.driver_version) s.emplace_back(at + "/driver_version", *lib.driver_version);
    if (lib.simulated) s.emplace_back(at + "/simulated", *lib.simulated);
  }
  if (r.system) {
    s.emplace_back("system/os", text_of(r.system->os_name));
    s.emplace_back("system/cpu_model", text_of(r.system->cpu_model));
    s.emplace_back("system/logical_cpus", text_of(r.system->logical_cpus));
  }
}

void add_virt(const report::VirtSection& v, Settings& s) {
  s.emplace_back("virtualization/hypervisor", v.hypervisor);
  s.emplace_back("virtualization/container", v.container);
  s.emplace_back("virtualization/product", text_of(v.product));
  s.emplace_back("virtualization/machine_type", text_of(v.machine_type));
  s.emplace_back("virtualization/machine_version", text_of(v.machine_version));
  s.emplace_back("virtualization/confidential", text_of(v.confidential));
  s.emplace_back("virtualization/numa_node_count", text_of(v.numa_node_count));
  s.emplace_back("iommu/group_count", fmt::format("{}", v.host.iommu_group_count));
  s.emplace_back("iommu/kernel_options", fmt::format("intel_iommu={} amd_iommu={} iommu={}", text_of(v.host.intel_iommu),
                                                     text_of(v.host.amd_iommu), text_of(v.host.iommu)));
  s.emplace_back("iommu/vfio_pci_gpus", fmt::format("{}", v.host.vfio_pci_gpus.size()));
  for (const auto& g : v.gpus) {
    std::string at = "passthrough/" + g.bdf;
    s.emplace_back(at + "/attachment", report::to_string(g.attachment));
    s.emplace_back(at + "/numa_exposed", g.numa_exposed ? "yes" : "no");
    s.emplace_back(at + "/iommu_group", text_of(g.iommu_group));
    s.emplace_back(at + "/p2p_clique", report::to_string(g.p2p_clique));
    s.emplace_back(at + "/link_synthetic", text_of(g.link_synthetic));
    s.emplace_back(at + "/large_bar", text_of(g.large_bar));
    s.emplace_back(at + "/nvml_virtualization_mode", text_of(g.nvml_virtualization_mode));
  }
}

std::string link_text(const report::PciLink& l) {
  auto gen = l.current_gts ? pcie_generation(*l.current_gts) : std::nullopt;
  std::string speed = gen ? fmt::format("Gen{}", *gen) : l.current_gts ? fmt::format("{} GT/s", *l.current_gts) : "unknown";
  return fmt::format("{} x{}{}", speed, text_of(l.current_lanes), l.downtrained == true ? " (downtrained)" : "");
}

void add_topology(const report::TopologySection& t, Settings& s) {
  s.emplace_back("topology/gpu_count", fmt::format("{}", t.gpus.size()));
  s.emplace_back("topology/numa_nodes", fmt::format("{}", t.cpu.numa_nodes.size()));
  for (const auto& g : t.gpus) {
    std::string at = fmt::format("topology/gpus/{}", g.index);
    s.emplace_back(at + "/name", text_of(g.name));
    s.emplace_back(at + "/numa_node", text_of(g.numa_node));
    if (const auto* d = t.device(g.bdf)) s.emplace_back(at + "/link", link_text(d->link));
    s.emplace_back(at + "/nvlinks", fmt::format("{}", g.nvlinks.size()));
  }
  for (const auto& p : t.gpu_pairs) {
    std::string at = fmt::format("topology/gpu_pairs/{}-{}", p.a_index, p.b_index);
    s.emplace_back(at + "/path", p.path);
    if (p.p2p)
      s.emplace_back(at + "/nvml_p2p", fmt::format("read {} write {}", text_of(p.p2p->read), text_of(p.p2p->write)));
  }
}

void add_measured_verdicts(const report::Report& r, Settings& s) {
  if (r.bandwidth) {
    s.emplace_back("bandwidth/plan", report::to_string(r.bandwidth->plan));
    s.emplace_back("bandwidth/thp_mode", text_of(r.bandwidth->thp_mode));
    for (const auto& p : r.bandwidth->p2p_pairs)
      s.emplace_back(fmt::format("bandwidth/p2p_truth/{}->{}", p.src, p.dst), report::to_string(p.truth));
  }
  if (r.bottlenecks)
    for (const auto& w : r.bottlenecks->workloads) {
      std::string at = fmt::format("bottlenecks/{}/tp{}", w.model, w.tp);
      s.emplace_back(at + "/lever", text_of(w.lever));
      s.emplace_back(at + "/confidence", report::to_string(w.confidence));
      for (const auto& b : w.batches) s.emplace_back(fmt::format("{}/b{}/bottleneck", at, b.batch), text_of(b.bottleneck));
    }
  std::string fails;
  for (const auto& f : r.findings)
    if (f.severity != report::Severity::info) fails += (fails.empty() ? "" : ", ") + f.id;
  s.emplace_back("findings/warn_or_fail", fails.empty() ? "none" : fails);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> settings_of(const report::Report& r) {
  Settings s;
  add_tool(r, s);
  if (r.virtualization) add_virt(*r.virtualization, s);
  if (r.topology) add_topology(*r.topology, s);
  add_measured_verdicts(r, s);
  return s;
}

}  // namespace interprobe::compare
