// JSON codec of the `topology` section (schema: report/schema/report.schema.json, $defs/topology).
#include "report/model/json_codec.hpp"
#include "report/model/topology.hpp"

namespace interprobe::report::codec {

namespace {

// Required strings of the model that may be unknown ("" when sysfs had garbage) are null in JSON.
json string_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }
std::string string_from(const In& in, const char* key) { return in.opt<std::string>(key).value_or(""); }

json encode_link(const PciLink& l) {
  json j = json::object();
  put(j, "current_gts", l.current_gts);
  put(j, "current_width", l.current_width);
  put(j, "max_gts", l.max_gts);
  put(j, "max_width", l.max_width);
  put(j, "current_gbps", l.current_gbps);
  put(j, "max_gbps", l.max_gbps);
  put(j, "downtrained", l.downtrained);
  return j;
}

PciLink decode_link(const In& in) {
  PciLink l;
  l.current_gts = in.opt<double>("current_gts");
  l.current_width = in.opt<int>("current_width");
  l.max_gts = in.opt<double>("max_gts");
  l.max_width = in.opt<int>("max_width");
  l.current_gbps = in.opt<double>("current_gbps");
  l.max_gbps = in.opt<double>("max_gbps");
  l.downtrained = in.opt<bool>("downtrained");
  return l;
}

json encode_device(const PciDevice& d) {
  json j = {{"bdf", d.bdf}, {"vendor_id", string_or_null(d.vendor_id)}, {"device_id", string_or_null(d.device_id)},
            {"class_id", string_or_null(d.class_id)}, {"kind", d.kind}, {"root_bus", string_or_null(d.root_bus)}};
  put(j, "vendor_name", d.vendor_name);
  put(j, "device_name", d.device_name);
  put(j, "driver", d.driver);
  put(j, "parent_bdf", d.parent_bdf);
  put(j, "numa_node", d.numa_node);
  put(j, "local_cpus", d.local_cpus);
  put(j, "iommu_group", d.iommu_group);
  put(j, "port_type", d.port_type);
  j["link"] = encode_link(d.link);
  j["warnings"] = d.warnings;
  return j;
}

PciDevice decode_device(const In& in) {
  PciDevice d;
  d.bdf = in.req<std::string>("bdf");
  d.vendor_id = string_from(in, "vendor_id");
  d.device_id = string_from(in, "device_id");
  d.class_id = string_from(in, "class_id");
  d.vendor_name = in.opt<std::string>("vendor_name");
  d.device_name = in.opt<std::string>("device_name");
  d.kind = in.req<std::string>("kind");
  d.driver = in.opt<std::string>("driver");
  d.parent_bdf = in.opt<std::string>("parent_bdf");
  d.root_bus = string_from(in, "root_bus");
  d.numa_node = in.opt<int>("numa_node");
  d.local_cpus = in.opt<std::string>("local_cpus");
  d.iommu_group = in.opt<int>("iommu_group");
  d.port_type = in.opt<std::string>("port_type");
  if (auto l = in.opt_child("link")) d.link = decode_link(*l);
  d.warnings = in.opt<std::vector<std::string>>("warnings").value_or(std::vector<std::string>{});
  return d;
}

json encode_cpu(const CpuTopology& c) {
  json j = json::object();
  put(j, "logical_cpus", c.logical_cpus);
  put(j, "cores", c.cores);
  j["packages_source"] = c.packages_source;
  json packages = json::array();
  for (const auto& p : c.packages) {
    json pj = {{"id", p.id}, {"numa_nodes", p.numa_nodes}};
    put(pj, "cpus", p.cpus);
    put(pj, "model", p.model);
    packages.push_back(pj);
  }
  j["packages"] = packages;
  json nodes = json::array();
  for (const auto& n : c.numa_nodes) {
    json nj = {{"id", n.id}, {"distances", n.distances}};
    put(nj, "cpus", n.cpus);
    put(nj, "memory_bytes", n.memory_bytes);
    nodes.push_back(nj);
  }
  j["numa_nodes"] = nodes;
  return j;
}

CpuTopology decode_cpu(const In& in) {
  CpuTopology c;
  c.logical_cpus = in.opt<int>("logical_cpus");
  c.cores = in.opt<int>("cores");
  c.packages_source = in.opt<std::string>("packages_source").value_or("none");
  for (const auto& p : in.opt_array("packages")) {
    CpuPackage pkg;
    pkg.id = p.req<int>("id");
    pkg.cpus = p.opt<std::string>("cpus");
    pkg.model = p.opt<std::string>("model");
    pkg.numa_nodes = p.opt<std::vector<int>>("numa_nodes").value_or(std::vector<int>{});
    c.packages.push_back(std::move(pkg));
  }
  for (const auto& n : in.opt_array("numa_nodes")) {
    NumaNode node;
    node.id = n.req<int>("id");
    node.cpus = n.opt<std::string>("cpus");
    node.memory_bytes = n.opt<std::int64_t>("memory_bytes");
    node.distances = n.opt<std::vector<int>>("distances").value_or(std::vector<int>{});
    c.numa_nodes.push_back(std::move(node));
  }
  return c;
}

json encode_p2p(const P2pStatus& p) {
  json j = json::object();
  put(j, "read", p.read);
  put(j, "write", p.write);
  put(j, "atomics", p.atomics);
  put(j, "nvlink", p.nvlink);
  return j;
}

P2pStatus decode_p2p(const In& in) {
  P2pStatus p;
  p.read = in.opt<std::string>("read");
  p.write = in.opt<std::string>("write");
  p.atomics = in.opt<std::string>("atomics");
  p.nvlink = in.opt<std::string>("nvlink");
  return p;
}

json encode_gpu(const Gpu& g) {
  json j = {{"index", g.index}, {"bdf", g.bdf}};
  put(j, "name", g.name);
  put(j, "uuid", g.uuid);
  put(j, "memory_total_bytes", g.memory_total_bytes);
  put(j, "numa_node", g.numa_node);
  put(j, "local_cpus", g.local_cpus);
  put(j, "virtualization_mode", g.virtualization_mode);
  json links = json::array();
  for (const auto& l : g.nvlinks) {
    json lj = {{"link", l.link}, {"remote_kind", l.remote_kind}};
    put(lj, "active", l.active);
    put(lj, "version", l.version);
    put(lj, "remote_bdf", l.remote_bdf);
    links.push_back(lj);
  }
  j["nvlinks"] = links;
  json nics = json::array();
  for (const auto& n : g.nearest_nics) nics.push_back({{"bdf", n.bdf}, {"kind", n.kind}, {"pcie_path", n.pcie_path}});
  j["nearest_nics"] = nics;
  return j;
}

Gpu decode_gpu(const In& in) {
  Gpu g;
  g.index = in.req<int>("index");
  g.bdf = in.req<std::string>("bdf");
  g.name = in.opt<std::string>("name");
  g.uuid = in.opt<std::string>("uuid");
  g.memory_total_bytes = in.opt<std::int64_t>("memory_total_bytes");
  g.numa_node = in.opt<int>("numa_node");
  g.local_cpus = in.opt<std::string>("local_cpus");
  g.virtualization_mode = in.opt<std::string>("virtualization_mode");
  for (const auto& l : in.opt_array("nvlinks")) {
    NvLinkInfo info;
    info.link = l.req<int>("link");
    info.active = l.opt<bool>("active");
    info.version = l.opt<int>("version");
    info.remote_bdf = l.opt<std::string>("remote_bdf");
    info.remote_kind = l.opt<std::string>("remote_kind").value_or("unknown");
    g.nvlinks.push_back(std::move(info));
  }
  for (const auto& n : in.opt_array("nearest_nics"))
    g.nearest_nics.push_back({n.req<std::string>("bdf"), n.req<std::string>("kind"), n.req<std::string>("pcie_path")});
  return g;
}

}  // namespace

json encode_topology(const TopologySection& s) {
  json j = {{"source", s.source}, {"gpu_index_order", s.gpu_index_order}};
  put(j, "nvml_source", s.nvml_source);
  put(j, "nvml_reason", s.nvml_reason);
  json devices = json::array();
  for (const auto& d : s.pci_devices) devices.push_back(encode_device(d));
  j["pci_devices"] = devices;
  j["cpu"] = encode_cpu(s.cpu);
  json gpus = json::array();
  for (const auto& g : s.gpus) gpus.push_back(encode_gpu(g));
  j["gpus"] = gpus;
  json pairs = json::array();
  for (const auto& p : s.gpu_pairs) {
    json pj = {{"a_bdf", p.a_bdf}, {"b_bdf", p.b_bdf}, {"a_index", p.a_index}, {"b_index", p.b_index},
               {"pcie_path", p.pcie_path}, {"nvlinks", p.nvlinks}, {"path", p.path}};
    put(pj, "bottleneck_gbps", p.bottleneck_gbps);
    pj["p2p"] = p.p2p ? encode_p2p(*p.p2p) : json(nullptr);
    pairs.push_back(pj);
  }
  j["gpu_pairs"] = pairs;
  j["warnings"] = s.warnings;
  return j;
}

TopologySection decode_topology(const In& in) {
  TopologySection s;
  s.source = in.req<std::string>("source");
  s.gpu_index_order = in.opt<std::string>("gpu_index_order").value_or("pci_bus_id");
  s.nvml_source = in.opt<std::string>("nvml_source");
  s.nvml_reason = in.opt<std::string>("nvml_reason");
  for (const auto& d : in.opt_array("pci_devices")) s.pci_devices.push_back(decode_device(d));
  if (auto c = in.opt_child("cpu")) s.cpu = decode_cpu(*c);
  for (const auto& g : in.opt_array("gpus")) s.gpus.push_back(decode_gpu(g));
  for (const auto& p : in.opt_array("gpu_pairs")) {
    GpuPair pair;
    pair.a_bdf = p.req<std::string>("a_bdf");
    pair.b_bdf = p.req<std::string>("b_bdf");
    pair.a_index = p.req<int>("a_index");
    pair.b_index = p.req<int>("b_index");
    pair.pcie_path = p.req<std::string>("pcie_path");
    pair.nvlinks = p.req<int>("nvlinks");
    pair.path = p.req<std::string>("path");
    pair.bottleneck_gbps = p.opt<double>("bottleneck_gbps");
    if (auto q = p.opt_child("p2p")) pair.p2p = decode_p2p(*q);
    s.gpu_pairs.push_back(std::move(pair));
  }
  s.warnings = in.opt<std::vector<std::string>>("warnings").value_or(std::vector<std::string>{});
  return s;
}

}  // namespace interprobe::report::codec
