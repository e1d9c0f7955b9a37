#include "report/model/json_codec.hpp"
#include "report/model/virt.hpp"

namespace interprobe::report::codec {

namespace {

json encode_acs(const BridgeAcs& a) {
  json j = {{"bdf", a.bdf}, {"vendor_device", a.vendor_device}};
  put(j, "acs_present", a.acs_present);
  put(j, "p2p_redirect", a.p2p_redirect);
  put(j, "acs_enabled", a.acs_enabled);
  put(j, "unknown_reason", a.unknown_reason);
  return j;
}

BridgeAcs decode_acs(const In& in) {
  BridgeAcs a;
  a.bdf = in.req<std::string>("bdf");
  a.vendor_device = in.req<std::string>("vendor_device");
  a.acs_present = in.opt<bool>("acs_present");
  a.p2p_redirect = in.opt<bool>("p2p_redirect");
  a.acs_enabled = in.opt<std::string>("acs_enabled");
  a.unknown_reason = in.opt<std::string>("unknown_reason");
  return a;
}

json encode_gpu(const GpuPassthrough& g) {
  json j = {{"bdf", g.bdf}, {"vendor_device", g.vendor_device}, {"attachment", g.attachment},
            {"attachment_detail", g.attachment_detail}, {"path_above", g.path_above},
            {"numa_exposed", g.numa_exposed}, {"iommu_group_peers", g.iommu_group_peers},
            {"p2p_clique", g.p2p_clique}};
  put(j, "device_name", g.device_name);
  put(j, "driver", g.driver);
  put(j, "link_synthetic", g.link_synthetic);
  put(j, "link_detail", g.link_detail);
  put(j, "gpu_max_gts", g.gpu_max_gts);
  put(j, "gpu_current_gts", g.gpu_current_gts);
  put(j, "gpu_max_width", g.gpu_max_width);
  put(j, "port_max_gts", g.port_max_gts);
  put(j, "numa_node", g.numa_node);
  put(j, "iommu_group", g.iommu_group);
  put(j, "p2p_clique_id", g.p2p_clique_id);
  put(j, "p2p_capability_offset", g.p2p_capability_offset);
  put(j, "nvml_virtualization_mode", g.nvml_virtualization_mode);
  put(j, "nvml_reason", g.nvml_reason);
  json bars = json::array();
  for (const auto& b : g.bars)
    bars.push_back({{"index", b.index}, {"size_bytes", b.size_bytes}, {"prefetchable", b.prefetchable},
                    {"is_64bit", b.is_64bit}});
  j["bars"] = bars;
  put(j, "bar1_bytes", g.bar1_bytes);
  put(j, "memory_bytes", g.memory_bytes);
  put(j, "large_bar", g.large_bar);
  json acs = json::array();
  for (const auto& a : g.acs_above) acs.push_back(encode_acs(a));
  j["acs_above"] = acs;
  return j;
}

GpuPassthrough decode_gpu(const In& in) {
  GpuPassthrough g;
  g.bdf = in.req<std::string>("bdf");
  g.vendor_device = in.req<std::string>("vendor_device");
  g.device_name = in.opt<std::string>("device_name");
  g.driver = in.opt<std::string>("driver");
  g.attachment = in.req<std::string>("attachment");
  g.attachment_detail = in.req<std::string>("attachment_detail");
  g.path_above = in.opt<std::vector<std::string>>("path_above").value_or(std::vector<std::string>{});
  g.link_synthetic = in.opt<bool>("link_synthetic");
  g.link_detail = in.opt<std::string>("link_detail");
  g.gpu_max_gts = in.opt<double>("gpu_max_gts");
  g.gpu_current_gts = in.opt<double>("gpu_current_gts");
  g.gpu_max_width = in.opt<int>("gpu_max_width");
  g.port_max_gts = in.opt<double>("port_max_gts");
  g.numa_exposed = in.req<bool>("numa_exposed");
  g.numa_node = in.opt<int>("numa_node");
  g.iommu_group = in.opt<int>("iommu_group");
  g.iommu_group_peers = in.opt<std::vector<std::string>>("iommu_group_peers").value_or(std::vector<std::string>{});
  g.p2p_clique = in.req<std::string>("p2p_clique");
  g.p2p_clique_id = in.opt<int>("p2p_clique_id");
  g.p2p_capability_offset = in.opt<int>("p2p_capability_offset");
  g.nvml_virtualization_mode = in.opt<std::string>("nvml_virtualization_mode");
  g.nvml_reason = in.opt<std::string>("nvml_reason");
  for (const auto& b : in.opt_array("bars")) {
    PciBar bar;
    bar.index = b.req<int>("index");
    bar.size_bytes = b.req<std::int64_t>("size_bytes");
    bar.prefetchable = b.req<bool>("prefetchable");
    bar.is_64bit = b.req<bool>("is_64bit");
    g.bars.push_back(bar);
  }
  g.bar1_bytes = in.opt<std::int64_t>("bar1_bytes");
  g.memory_bytes = in.opt<std::int64_t>("memory_bytes");
  g.large_bar = in.opt<bool>("large_bar");
  for (const auto& a : in.opt_array("acs_above")) g.acs_above.push_back(decode_acs(a));
  return g;
}

json encode_host(const HostIommu& h) {
  json j = {{"iommu_groups", h.iommu_groups}, {"vfio_pci_gpus", h.vfio_pci_gpus}};
  put(j, "intel_iommu", h.intel_iommu);
  put(j, "amd_iommu", h.amd_iommu);
  put(j, "iommu", h.iommu);
  put(j, "passthrough_mode", h.passthrough_mode);
  put(j, "vfio_pci_ids", h.vfio_pci_ids);
  return j;
}

HostIommu decode_host(const In& in) {
  HostIommu h;
  h.intel_iommu = in.opt<std::string>("intel_iommu");
  h.amd_iommu = in.opt<std::string>("amd_iommu");
  h.iommu = in.opt<std::string>("iommu");
  h.passthrough_mode = in.opt<bool>("passthrough_mode");
  h.vfio_pci_ids = in.opt<std::string>("vfio_pci_ids");
  h.iommu_groups = in.req<std::int64_t>("iommu_groups");
  h.vfio_pci_gpus = in.opt<std::vector<std::string>>("vfio_pci_gpus").value_or(std::vector<std::string>{});
  return h;
}

}  // namespace

json encode_virtualization(const VirtSection& s) {
  json j = {{"hypervisor", s.hypervisor}, {"container", s.container}, {"confidence", s.confidence},
            {"container_confidence", s.container_confidence}, {"privileged", s.privileged},
            {"conflicts", s.conflicts}};
  put(j, "product", s.product);
  put(j, "machine_type", s.machine_type);
  put(j, "machine_version", s.machine_version);
  put(j, "xen_role", s.xen_role);
  put(j, "confidential", s.confidential);
  put(j, "numa_nodes", s.numa_nodes);
  json evidence = json::array();
  for (const auto& e : s.evidence)
    evidence.push_back({{"source", e.source}, {"family", e.family}, {"value", e.value}, {"implies", e.implies}});
  j["evidence"] = evidence;
  j["host"] = encode_host(s.host);
  json gpus = json::array();
  for (const auto& g : s.gpus) gpus.push_back(encode_gpu(g));
  j["gpus"] = gpus;
  return j;
}

VirtSection decode_virtualization(const In& in) {
  VirtSection s;
  s.hypervisor = in.req<std::string>("hypervisor");
  s.container = in.req<std::string>("container");
  s.product = in.opt<std::string>("product");
  s.machine_type = in.opt<std::string>("machine_type");
  s.machine_version = in.opt<std::string>("machine_version");
  s.xen_role = in.opt<std::string>("xen_role");
  s.confidential = in.opt<std::string>("confidential");
  s.confidence = in.req<std::string>("confidence");
  s.container_confidence = in.req<std::string>("container_confidence");
  s.privileged = in.req<bool>("privileged");
  s.numa_nodes = in.opt<std::int64_t>("numa_nodes");
  s.conflicts = in.opt<std::vector<std::string>>("conflicts").value_or(std::vector<std::string>{});
  for (const auto& e : in.opt_array("evidence")) {
    VirtEvidence ev;
    ev.source = e.req<std::string>("source");
    ev.family = e.req<std::string>("family");
    ev.value = e.req<std::string>("value");
    ev.implies = e.req<std::string>("implies");
    s.evidence.push_back(std::move(ev));
  }
  if (auto host = in.opt_child("host")) s.host = decode_host(*host);
  for (const auto& g : in.opt_array("gpus")) s.gpus.push_back(decode_gpu(g));
  return s;
}

}  // namespace interprobe::report::codec
