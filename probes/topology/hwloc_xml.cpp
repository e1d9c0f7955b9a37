// The topology from an hwloc XML export, through hwloc's XML importer (no parser of our own).
#include "probes/topology/hwloc_xml.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "interprobe/build_config.hpp"
#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/isolated_call.hpp"
#include "common/user_file.hpp"
#include "common/hwloc_environment.hpp"
#include "common/text.hpp"
#include "probes/topology/cpu_numa.hpp"
#include "probes/topology/pci_inventory.hpp"
#include "probes/topology/pci_kind.hpp"
#include "model/json.hpp"

#if INTERPROBE_HAVE_HWLOC
#include <hwloc.h>

#include "common/hwloc_topology.hpp"
#endif

namespace interprobe {

int nvlinks_from_bandwidth_mbps(unsigned long long mbps) {
  if (mbps == 0) return 0;
  // hwloc's NVML backend adds 20000 MB/s per NVLink 1 link and 25000 per NVLink 2-4 link.
  if (mbps % 25000 != 0 && mbps % 20000 == 0) return static_cast<int>(mbps / 20000);
  return static_cast<int>(std::lround(static_cast<double>(mbps) / 25000.0));
}

#if INTERPROBE_HAVE_HWLOC

namespace {

std::string bdf_of(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", static_cast<unsigned>(pci.domain), static_cast<unsigned>(pci.bus),
                     static_cast<unsigned>(pci.dev), static_cast<unsigned>(pci.func));
}

const hwloc_obj_attr_u::hwloc_pcidev_attr_s* pci_attr(hwloc_obj_t obj) {
  if (obj->type == HWLOC_OBJ_PCI_DEVICE) return &obj->attr->pcidev;
  if (obj->type == HWLOC_OBJ_BRIDGE && obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) return &obj->attr->bridge.upstream.pci;
  return nullptr;
}

report::PciDevice device_of(hwloc_topology_t t, hwloc_obj_t obj, const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci) {
  report::PciDevice d;
  d.bdf = bdf_of(pci);
  d.vendor_id = fmt::format("{:04x}", static_cast<unsigned>(pci.vendor_id));
  d.device_id = fmt::format("{:04x}", static_cast<unsigned>(pci.device_id));
  // hwloc 2 keeps no programming interface: the last two digits read 00.
  d.class_id = fmt::format("{:04x}00", static_cast<unsigned>(pci.class_id));
  // Names hwloc recorded win; fill_pci_names looks up the others in pci.ids.
  if (const char* v = hwloc_obj_get_info_by_name(obj, "PCIVendor")) d.vendor_name = std::string(v);
  if (const char* n = hwloc_obj_get_info_by_name(obj, "PCIDevice")) d.device_name = std::string(n);
  if (pci.linkspeed > 0) d.link.current_gbps = static_cast<double>(pci.linkspeed);
  // The place in the tree: the bridge above, up to the host bridge that names the root bus.
  for (hwloc_obj_t up = obj->parent; up; up = up->parent) {
    if (up->type != HWLOC_OBJ_BRIDGE) break;
    if (up->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) {
      if (!d.parent_bdf) d.parent_bdf = bdf_of(up->attr->bridge.upstream.pci);
      continue;
    }
    const auto& down = up->attr->bridge.downstream.pci;
    d.root_bus = fmt::format("pci{:04x}:{:02x}", static_cast<unsigned>(down.domain), static_cast<unsigned>(down.secondary_bus));
    break;
  }
  if (hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(t, obj)) {
    if (local->nodeset && hwloc_bitmap_weight(local->nodeset) == 1) d.numa_node = hwloc_bitmap_first(local->nodeset);
    if (local->cpuset) d.local_cpus = cpulist_of(local->cpuset);
  }
  d.kind = classify_pci_kind(d, true);
  return d;
}

void read_cpu(hwloc_topology_t t, report::CpuTopology& cpu) {
  int pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  if (pus > 0) cpu.logical_cpus = pus;
  int cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  if (cores > 0) cpu.cores = cores;
  int packages = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
  for (int i = 0; i < packages; ++i) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, static_cast<unsigned>(i));
    report::CpuPackage p;
    p.id = obj->os_index == HWLOC_UNKNOWN_INDEX ? i : static_cast<int>(obj->os_index);
    p.cpus = cpulist_of(obj->cpuset);
    if (const char* model = hwloc_obj_get_info_by_name(obj, "CPUModel")) p.model = std::string(model);
    cpu.packages.push_back(std::move(p));
  }
  if (!cpu.packages.empty()) cpu.packages_source = report::PackagesSource::hwloc_xml;
  int nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  std::vector<hwloc_obj_t> node_objs;
  for (int i = 0; i < nodes; ++i) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    report::NumaNode n;
    n.id = static_cast<int>(obj->os_index);
    n.cpus = cpulist_of(obj->cpuset);
    if (obj->attr->numanode.local_memory > 0) n.memory_bytes = static_cast<std::int64_t>(obj->attr->numanode.local_memory);
    cpu.numa_nodes.push_back(std::move(n));
    node_objs.push_back(obj);
  }
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (hwloc_distances_get_by_name(t, "NUMALatency", &nr, &dist, 0) == 0 && nr >= 1 && dist) {
    for (std::size_t i = 0; i < node_objs.size(); ++i) {
      for (std::size_t j = 0; j < node_objs.size(); ++j) {
        hwloc_uint64_t to = 0, from = 0;
        if (hwloc_distances_obj_pair_values(dist, node_objs[i], node_objs[j], &to, &from) != 0) {
          cpu.numa_nodes[i].distances.clear();
          break;
        }
        cpu.numa_nodes[i].distances.push_back(static_cast<int>(to));
      }
    }
    hwloc_distances_release(t, dist);
  }
  attach_numa_nodes_to_packages(cpu);
}

// The PCI device a GPU OS device (nvml0, cuda0) hangs off.
hwloc_obj_t pci_parent(hwloc_obj_t obj) {
  while (obj && obj->type == HWLOC_OBJ_OS_DEVICE) obj = obj->parent;
  return obj && obj->type == HWLOC_OBJ_PCI_DEVICE ? obj : nullptr;
}

void read_gpu_os_devices(hwloc_topology_t t, NvmlTopology& gpu_data) {
  std::map<std::string, NvmlGpuRecord> by_bdf;
  for (hwloc_obj_t os = hwloc_get_next_osdev(t, nullptr); os; os = hwloc_get_next_osdev(t, os)) {
    hwloc_obj_t pci = pci_parent(os);
    if (!pci || pci->attr->pcidev.vendor_id != 0x10de) continue;
    auto& rec = by_bdf[bdf_of(pci->attr->pcidev)];
    rec.bdf = bdf_of(pci->attr->pcidev);
    if (const char* model = hwloc_obj_get_info_by_name(os, "GPUModel")) rec.name = std::string(model);
    if (const char* uuid = hwloc_obj_get_info_by_name(os, "NVIDIAUUID")) rec.uuid = std::string(uuid);
    if (const char* kib = hwloc_obj_get_info_by_name(os, "CUDAGlobalMemorySize")) {
      char* end = nullptr;
      unsigned long long v = std::strtoull(kib, &end, 10);
      if (end && *end == '\0' && v > 0 && v <= static_cast<unsigned long long>(INT64_MAX))
        rec.memory_total_bytes = kib_to_bytes(static_cast<std::int64_t>(v));
    }
  }
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (hwloc_distances_get_by_name(t, "NVLinkBandwidth", &nr, &dist, 0) == 0 && nr >= 1 && dist) {
    for (unsigned i = 0; i < dist->nbobjs; ++i) {
      hwloc_obj_t from = pci_parent(dist->objs[i]);
      if (!from || dist->objs[i]->type != HWLOC_OBJ_OS_DEVICE) continue;  // rows of GPUs only
      auto& rec = by_bdf[bdf_of(from->attr->pcidev)];
      rec.bdf = bdf_of(from->attr->pcidev);
      for (unsigned j = 0; j < dist->nbobjs; ++j) {
        if (i == j) continue;
        int links = nvlinks_from_bandwidth_mbps(dist->values[i * dist->nbobjs + j]);
        hwloc_obj_t peer = dist->objs[j];
        report::NvLinkInfo info;
        info.active = true;
        if (peer->type == HWLOC_OBJ_OS_DEVICE && pci_parent(peer)) {
          info.remote_kind = report::NvLinkRemoteKind::gpu;
          info.remote_bdf = bdf_of(pci_parent(peer)->attr->pcidev);
        } else if (peer->type == HWLOC_OBJ_PCI_DEVICE) {
          info.remote_kind = peer->attr->pcidev.vendor_id == 0x10de ? report::NvLinkRemoteKind::nvswitch
                                                                   : report::NvLinkRemoteKind::unknown;
          info.remote_bdf = bdf_of(peer->attr->pcidev);
        } else {
          info.remote_kind = report::NvLinkRemoteKind::cpu;
        }
        for (int k = 0; k < links; ++k) {
          info.link = static_cast<int>(rec.nvlinks.size());
          rec.nvlinks.push_back(info);
        }
      }
    }
    hwloc_distances_release(t, dist);
  }
  for (auto& [bdf, rec] : by_bdf) gpu_data.gpus.push_back(std::move(rec));
}

void load_and_read(const std::string& path, const std::string& xml, report::TopologySection& s, NvmlTopology& gpu_data) {
  HwlocBuiltinComponentsOnly builtin_only;  // hwloc's own XML parser; no plugin (libxml2, GL, OpenCL) loaded
  HwlocTopology topo;
  if (!topo) throw std::runtime_error("hwloc_topology_init failed");
  hwloc_topology_set_io_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_ALL);
  if (hwloc_topology_set_xmlbuffer(topo.get(), xml.c_str(), static_cast<int>(xml.size() + 1)) != 0 ||
      hwloc_topology_load(topo.get()) != 0)
    throw InputError(fmt::format("--hwloc-xml {}: hwloc cannot load it ({}); is it an `lstopo --of xml` export?", path,
                                 std::strerror(errno)));
  s.pci_devices.clear();
  for (hwloc_obj_t obj = hwloc_get_next_bridge(topo.get(), nullptr); obj; obj = hwloc_get_next_bridge(topo.get(), obj))
    if (const auto* pci = pci_attr(obj)) s.pci_devices.push_back(device_of(topo.get(), obj, *pci));
  for (hwloc_obj_t obj = hwloc_get_next_pcidev(topo.get(), nullptr); obj; obj = hwloc_get_next_pcidev(topo.get(), obj))
    s.pci_devices.push_back(device_of(topo.get(), obj, obj->attr->pcidev));
  std::sort(s.pci_devices.begin(), s.pci_devices.end(), [](const auto& a, const auto& b) { return bdf_less(a.bdf, b.bdf); });
  std::vector<report::PciDevice> unnamed;
  for (const auto& d : s.pci_devices)
    if (!d.vendor_name || !d.device_name) unnamed.push_back(d);
  fill_pci_names(HostRoot(), unnamed, nullptr);
  for (const auto& named : unnamed)
    for (auto& d : s.pci_devices)
      if (d.bdf == named.bdf) {
        if (!d.vendor_name) d.vendor_name = named.vendor_name;
        if (!d.device_name) d.device_name = named.device_name;
      }
  s.cpu = report::CpuTopology{};
  read_cpu(topo.get(), s.cpu);
  read_gpu_os_devices(topo.get(), gpu_data);
}

// What the child sends back: the topology as a report and the GPU data as an NVML recording,
// the two formats interprobe already reads with checks, split by a NUL.
std::string encode_answer(const report::TopologySection& s, const NvmlTopology& gpu_data) {
  report::Report r;
  r.topology = s;
  return report::to_json_text(r, -1) + '\0' + encode_nvml_recording(gpu_data);
}

void decode_answer(const std::string& path, const std::string& answer, report::TopologySection& s, NvmlTopology& gpu_data) {
  auto split = answer.find('\0');
  report::Report r = report::parse_report_text(answer.substr(0, split), "--hwloc-xml " + path + " (as read by hwloc)");
  std::string why;
  auto gpus = split == std::string::npos ? std::nullopt : parse_nvml_recording(answer.substr(split + 1), &why);
  if (!r.topology || !gpus) throw std::runtime_error(fmt::format("--hwloc-xml {}: the reading process answered garbage ({})", path, why));
  s.pci_devices = std::move(r.topology->pci_devices);
  s.cpu = std::move(r.topology->cpu);
  gpu_data.gpus = std::move(gpus->gpus);
}

// libhwloc 2.9 crashes, loops or allocates without end on some malformed XML (lstopo too).
// hwloc reads the file only in a child process, within `limits`; this process takes the
// child's answer, never touching a topology hwloc built from foreign bytes.
std::string read_in_child(const std::string& path, const std::string& xml, const IsolationLimits& limits) {
  IsolatedResult child = run_isolated(
      [&] {
        // Test-only: no hwloc 2.9 crash input is known to us, so the tests make the child crash.
        if (std::getenv("INTERPROBE_TEST_CRASH_HWLOC_CHILD")) std::raise(SIGSEGV);
        report::TopologySection s;
        NvmlTopology gpu_data;
        load_and_read(path, xml, s, gpu_data);
        return encode_answer(s, gpu_data);
      },
      limits);
  using Ended = IsolatedResult::Ended;
  const std::string again = "the file is malformed; export it again with `lstopo --of xml FILE`";
  switch (child.ended) {
    case Ended::answered: return child.answer;
    case Ended::failed:
      if (!child.answer.empty()) throw InputError(child.answer);
      throw InputError(fmt::format("--hwloc-xml {}: hwloc's reading of it ended with status {}; {}", path, child.exit_status, again));
    case Ended::crashed:
      throw InputError(fmt::format("--hwloc-xml {}: hwloc crashed reading it ({}); {}", path, strsignal(child.signal), again));
    case Ended::timed_out:
      throw InputError(fmt::format("--hwloc-xml {}: hwloc did not finish reading it within {} s; {}", path, limits.timeout_s, again));
    case Ended::too_large: throw InputError(fmt::format("--hwloc-xml {}: what hwloc read from it is too large; {}", path, again));
    case Ended::not_started: break;
  }
  throw std::runtime_error(fmt::format("--hwloc-xml {}: cannot start the process that reads it ({})", path, child.why));
}

}  // namespace

void read_hwloc_xml(const std::string& path, report::TopologySection& s, NvmlTopology& gpu_data,
                    const IsolationLimits& limits) {
  std::string xml = read_user_file(path, {"--hwloc-xml " + path, "an export made with `lstopo --of xml FILE`", kMaxHwlocXmlBytes});
  decode_answer(path, read_in_child(path, xml, limits), s, gpu_data);
}

#else

void read_hwloc_xml(const std::string& path, report::TopologySection&, NvmlTopology&, const IsolationLimits&) {
  throw UnsupportedError(fmt::format("--hwloc-xml {}: compiled out: hwloc; rebuild with -DINTERPROBE_WITH_HWLOC=ON", path));
}

#endif

}  // namespace interprobe
