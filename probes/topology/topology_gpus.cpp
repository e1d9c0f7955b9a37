// GPUs, GPU pairs and nearest NICs from the PCI inventory (+ NVML when there is some).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "probes/topology/nvlink_rate.hpp"
#include "probes/topology/nvml_topology.hpp"
#include "probes/topology/pci_tree.hpp"
#include "probes/topology/topology_probe.hpp"

namespace interprobe {

namespace {

struct NvLinkSummary {
  std::map<std::string, int> direct;   // remote GPU bdf -> active links
  int to_switches = 0;                 // active links into NVSwitches
  std::set<std::string> switches;      // their addresses, where known
  bool switch_address_unknown = false;
};

NvLinkSummary summarize(const report::Gpu& gpu, const report::TopologySection& s) {
  NvLinkSummary out;
  for (const auto& link : gpu.nvlinks) {
    if (link.active && !*link.active) continue;
    using report::NvLinkRemoteKind;
    NvLinkRemoteKind kind = link.remote_kind;
    if (kind == NvLinkRemoteKind::unknown && link.remote_bdf) {
      if (const auto* d = s.device(*link.remote_bdf)) {
        if (d->kind == report::PciKind::nvswitch) kind = NvLinkRemoteKind::nvswitch;
        else if (d->kind == report::PciKind::gpu) kind = NvLinkRemoteKind::gpu;
      }
    }
    if (kind == NvLinkRemoteKind::nvswitch) {
      ++out.to_switches;
      if (link.remote_bdf) out.switches.insert(*link.remote_bdf);
      else out.switch_address_unknown = true;
    } else if (kind == NvLinkRemoteKind::gpu && link.remote_bdf) {
      ++out.direct[*link.remote_bdf];
    }
  }
  return out;
}

int nvlinks_between(const report::Gpu& a, const NvLinkSummary& sa, const report::Gpu& b, const NvLinkSummary& sb) {
  int direct = 0;
  if (auto it = sa.direct.find(b.bdf); it != sa.direct.end()) direct = it->second;
  else if (auto jt = sb.direct.find(a.bdf); jt != sb.direct.end()) direct = jt->second;
  int via_switch = 0;
  if (sa.to_switches > 0 && sb.to_switches > 0) {
    bool same_fabric = sa.switch_address_unknown || sb.switch_address_unknown ||
                       std::any_of(sa.switches.begin(), sa.switches.end(), [&](const std::string& x) { return sb.switches.count(x) > 0; });
    // NVSwitches forward at full rate: the pair gets the links of the GPU with fewer of them.
    if (same_fabric) via_switch = std::min(sa.to_switches, sb.to_switches);
  }
  return direct + via_switch;
}

// One link's rate of a GPU (every active link of a GPU runs at one rate); nullopt when neither
// NVML's version nor the architecture tells.
std::optional<double> link_rate_of(const report::Gpu& gpu) {
  std::optional<std::int64_t> version;
  for (const auto& link : gpu.nvlinks)
    if ((!link.active || *link.active) && link.version) version = link.version;
  return nvlink_gbps_per_link(version, gpu.compute_capability, gpu.name);
}

// A pair's NVLink bandwidth per direction: its links at the slower end's rate (an NVSwitch port
// runs at the GPU's link rate, so the switched path is bounded the same way).
std::optional<double> nvlink_bottleneck(const report::Gpu& a, const report::Gpu& b, std::int64_t links,
                                        std::vector<std::string>& warnings) {
  auto ra = link_rate_of(a), rb = link_rate_of(b);
  if (ra && rb) return static_cast<double>(links) * std::min(*ra, *rb);
  const report::Gpu& unknown = ra ? b : a;
  std::string why = fmt::format("GPU {} ({}): the NVLink rate is unknown (NVML link version {}, compute capability {}); "
                                "its NVLinked pairs have no bottleneck figure",
                                unknown.index, unknown.bdf,
                                unknown.nvlinks.empty() || !unknown.nvlinks.front().version ? "not given" : std::to_string(*unknown.nvlinks.front().version),
                                unknown.compute_capability.value_or("not given"));
  if (std::find(warnings.begin(), warnings.end(), why) == warnings.end()) warnings.push_back(std::move(why));  // once per GPU
  return std::nullopt;
}

const NvmlP2pRecord* find_p2p(const NvmlTopology* nvml, const std::string& a, const std::string& b) {
  if (!nvml) return nullptr;
  for (const auto& p : nvml->p2p)
    if ((p.a_bdf == a && p.b_bdf == b) || (p.a_bdf == b && p.b_bdf == a)) return &p;
  return nullptr;
}

}  // namespace

void derive_gpu_topology(report::TopologySection& s, const NvmlTopology* nvml) {
  PciTree tree(s.pci_devices);
  s.gpus.clear();
  s.gpu_pairs.clear();
  // pci_devices is sorted by BDF: the index is CUDA_DEVICE_ORDER=PCI_BUS_ID order.
  for (const auto& d : s.pci_devices) {
    if (d.kind != report::PciKind::gpu) continue;
    report::Gpu gpu;
    gpu.index = static_cast<int>(s.gpus.size());
    gpu.bdf = d.bdf;
    gpu.name = d.device_name;
    gpu.numa_node = d.numa_node;
    gpu.local_cpus = d.local_cpus;
    s.gpus.push_back(std::move(gpu));
  }
  if (nvml) {
    for (const auto& rec : nvml->gpus) {
      auto it = std::find_if(s.gpus.begin(), s.gpus.end(), [&](const report::Gpu& g) { return g.bdf == rec.bdf; });
      if (it == s.gpus.end()) {
        s.warnings.push_back(fmt::format("NVML ({}) lists GPU {} that the PCI inventory does not show",
                                         nvml->source ? report::to_string(*nvml->source) : "hwloc_xml", rec.bdf));
        continue;
      }
      if (rec.name) it->name = rec.name;
      it->uuid = rec.uuid;
      it->compute_capability = rec.compute_capability;
      it->memory_bytes = rec.memory_total_bytes;
      it->virtualization_mode = rec.virtualization_mode;
      it->nvlinks = rec.nvlinks;
    }
  }
  // Nearest NICs: every NIC on the best path class from the GPU (GPUDirect RDMA placement).
  for (auto& gpu : s.gpus) {
    std::vector<report::NearNic> best;
    int best_rank = rank_of(PcieClass::unknown) + 1;
    for (const auto& d : s.pci_devices) {
      if (d.kind != report::PciKind::nic && d.kind != report::PciKind::infiniband) continue;
      PcieClass c = tree.classify(gpu.bdf, d.bdf);
      int r = rank_of(c);
      if (r < best_rank) {
        best.clear();
        best_rank = r;
      }
      report::NearNic path{d.bdf, d.kind == report::PciKind::nic ? report::NicKind::nic : report::NicKind::infiniband,
                           to_pcie_path(c)};
      gpu.nic_paths.push_back(path);
      if (r == best_rank) best.push_back(path);
    }
    gpu.nearest_nics = std::move(best);
  }
  std::vector<NvLinkSummary> links;
  for (const auto& gpu : s.gpus) links.push_back(summarize(gpu, s));
  for (std::size_t i = 0; i < s.gpus.size(); ++i) {
    for (std::size_t j = i + 1; j < s.gpus.size(); ++j) {
      const auto& a = s.gpus[i];
      const auto& b = s.gpus[j];
      report::GpuPair pair;
      pair.a_bdf = a.bdf;
      pair.b_bdf = b.bdf;
      pair.a_index = a.index;
      pair.b_index = b.index;
      pair.pcie_path = to_pcie_path(tree.classify(a.bdf, b.bdf));
      pair.nvlink_count = nvlinks_between(a, links[i], b, links[j]);
      pair.path = pair.nvlink_count > 0 ? fmt::format("NV{}", pair.nvlink_count) : report::to_string(pair.pcie_path);
      pair.pcie_bottleneck_gbps = tree.bottleneck_gbps(a.bdf, b.bdf);
      pair.bottleneck_gbps = pair.nvlink_count > 0 ? nvlink_bottleneck(a, b, pair.nvlink_count, s.warnings) : pair.pcie_bottleneck_gbps;
      if (const auto* p = find_p2p(nvml, a.bdf, b.bdf)) pair.p2p = p->status;
      s.gpu_pairs.push_back(std::move(pair));
    }
  }
}

}  // namespace interprobe
