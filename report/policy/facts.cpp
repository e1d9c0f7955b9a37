#include "report/policy/facts.hpp"

#include <algorithm>
#include <type_traits>

#include <fmt/format.h>

#include "model/sections.hpp"

namespace interprobe::policy {

namespace {

using report::to_string;

class FactTable {
 public:
  void add(std::string path, Literal value) { rows_.push_back({std::move(path), std::move(value)}); }
  template <class T>
  void add_optional(std::string path, const std::optional<T>& value) {
    if (!value) return;
    if constexpr (std::is_same_v<T, bool>) add(std::move(path), *value);
    else if constexpr (std::is_same_v<T, std::string>) add(std::move(path), *value);
    else if constexpr (std::is_enum_v<T>) add(std::move(path), std::string(to_string(*value)));
    else add(std::move(path), static_cast<double>(*value));
  }
  std::vector<FactRow> take() { return std::move(rows_); }

 private:
  std::vector<FactRow> rows_;
};

void add_virtualization(const report::VirtSection& v, FactTable& t) {
  t.add("virtualization/hypervisor", v.hypervisor);
  t.add("virtualization/container", v.container);
  t.add("virtualization/confidence", std::string(to_string(v.confidence)));
  t.add_optional("virtualization/product", v.product);
  t.add_optional("virtualization/machine_type", v.machine_type);
  t.add_optional("virtualization/confidential", v.confidential);
  t.add_optional("virtualization/numa_node_count", v.numa_node_count);
  t.add_optional("virtualization/host/passthrough_mode", v.host.passthrough_mode);
  t.add("virtualization/host/vfio_pci_gpu_count", static_cast<double>(v.host.vfio_pci_gpus.size()));
  t.add("virtualization/gpu_count", static_cast<double>(v.gpus.size()));
  for (const auto& g : v.gpus) {
    std::string at = "virtualization/gpus/" + g.bdf;
    t.add(at + "/attachment", std::string(to_string(g.attachment)));
    t.add(at + "/numa_exposed", g.numa_exposed);
    // "unknown" (config space unreadable) is no row: it cannot pass a check.
    if (g.p2p_clique != report::P2pClique::unknown) t.add(at + "/p2p_clique", std::string(to_string(g.p2p_clique)));
    t.add_optional(at + "/link_synthetic", g.link_synthetic);
    t.add_optional(at + "/large_bar", g.large_bar);
    t.add_optional(at + "/driver", g.driver);
    t.add_optional(at + "/nvml_virtualization_mode", g.nvml_virtualization_mode);
    bool redirect = std::any_of(g.acs_above.begin(), g.acs_above.end(),
                                [](const report::BridgeAcs& a) { return a.p2p_redirect.value_or(false); });
    bool acs_known = std::all_of(g.acs_above.begin(), g.acs_above.end(),
                                 [](const report::BridgeAcs& a) { return a.p2p_redirect.has_value(); });
    if (acs_known) t.add(at + "/acs_redirect", redirect);
  }
}

void add_topology(const report::TopologySection& s, FactTable& t) {
  t.add("topology/gpu_count", static_cast<double>(s.gpus.size()));
  t.add("topology/numa_node_count", static_cast<double>(s.cpu.numa_nodes.size()));
  for (const auto& g : s.gpus) {
    std::string at = fmt::format("topology/gpus/{}", g.index);
    t.add(at + "/numa_exposed", g.numa_node.has_value());
    t.add_optional(at + "/name", g.name);
    t.add_optional(at + "/virtualization_mode", g.virtualization_mode);
    if (const report::PciDevice* d = s.device(g.bdf)) t.add_optional(at + "/link_downtrained", d->link.downtrained);
  }
  for (const auto& d : s.pci_devices)
    t.add_optional(fmt::format("topology/pci_devices/{}/link_downtrained", d.bdf), d.link.downtrained);
  for (const auto& p : s.gpu_pairs) {
    std::string at = fmt::format("topology/gpu_pairs/{}-{}", p.a_index, p.b_index);
    t.add(at + "/path", p.path);
    t.add(at + "/pcie_path", std::string(to_string(p.pcie_path)));
    if (p.p2p) {
      t.add_optional(at + "/p2p_read", p.p2p->read);
      t.add_optional(at + "/p2p_write", p.p2p->write);
      t.add_optional(at + "/p2p_nvlink", p.p2p->nvlink);
    }
  }
}

void add_bandwidth(const report::BandwidthSection& b, FactTable& t) {
  for (const auto& p : b.p2p_pairs) {
    std::string at = fmt::format("bandwidth/p2p_truth/{}->{}", p.src, p.dst);
    t.add(at + "/truth", std::string(to_string(p.truth)));
    t.add(at + "/peer_access_claimed", p.peer_access_claimed);
  }
}

void add_bottlenecks(const report::BottleneckSection& b, FactTable& t) {
  for (const auto& w : b.workloads) {
    std::string model = w.model;
    std::replace(model.begin(), model.end(), '/', '_');  // as the metrics view names it
    for (const auto& e : w.batches)
      t.add_optional(fmt::format("bottlenecks/{}/tp{}/b{}/bottleneck", model, w.tp, e.batch), e.bottleneck);
    t.add(fmt::format("bottlenecks/{}/tp{}/confidence", model, w.tp), std::string(to_string(w.confidence)));
  }
}

}  // namespace

std::vector<FactRow> facts_of(const report::Report& r) {
  FactTable t;
  for (const auto& p : r.probes) t.add(fmt::format("probes/{}/status", p.name), std::string(to_string(p.status)));
  if (r.topology) add_topology(*r.topology, t);
  if (r.virtualization) add_virtualization(*r.virtualization, t);
  if (r.bandwidth) add_bandwidth(*r.bandwidth, t);
  if (r.bottlenecks) add_bottlenecks(*r.bottlenecks, t);
  return t.take();
}

const std::vector<std::string>& fact_sections() {
  static const std::vector<std::string> sections = report::section_names(&report::SectionInfo::policy_facts);
  return sections;
}

}  // namespace interprobe::policy
