// Findings from the `topology` section: links trained below what they can do, GPU pairs whose P2P
// NVML refuses, pairs NCCL will not run P2P on by default, GPUs far from their RDMA NIC, and
// unreadable sysfs files.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/analysis/findings.hpp"

namespace interprobe::analysis {

namespace {

using report::Finding;
using report::Severity;
using report::TopologySection;
using report::Value;

Value opt_number(const std::optional<double>& v) { return v ? Value(*v) : Value(nullptr); }
Value opt_int(const std::optional<std::int64_t>& v) { return v ? Value(*v) : Value(nullptr); }

// Width is negotiated once at training; speed also drops when an NVIDIA GPU idles, so for GPUs
// only a narrower link is a fault visible at rest.
void downtrained_links(const TopologySection& s, std::vector<Finding>& out) {
  for (const auto& d : s.pci_devices) {
    if (!d.link.downtrained.value_or(false)) continue;
    using report::PciKind;
    if (d.kind != PciKind::gpu && d.kind != PciKind::nic && d.kind != PciKind::infiniband && d.kind != PciKind::nvme &&
        d.kind != PciKind::nvswitch)
      continue;
    bool narrower = d.link.current_lanes && d.link.max_lanes && *d.link.current_lanes < *d.link.max_lanes;
    if (d.kind == PciKind::gpu && !narrower) continue;
    Finding f;
    f.id = "topology.link_downtrained";
    f.severity = Severity::warn;
    f.title = fmt::format("{} {} links at {:g} GT/s x{}, capable of {:g} GT/s x{}", report::to_string(d.kind), d.bdf, d.link.current_gts.value_or(0),
                          d.link.current_lanes.value_or(0), d.link.max_gts.value_or(0), d.link.max_lanes.value_or(0));
    f.evidence = {{"bdf", d.bdf},
                  {"current_gts", opt_number(d.link.current_gts)},
                  {"current_lanes", opt_int(d.link.current_lanes)},
                  {"max_gts", opt_number(d.link.max_gts)},
                  {"max_lanes", opt_int(d.link.max_lanes)},
                  {"current_gbps", opt_number(d.link.current_gbps)},
                  {"max_gbps", opt_number(d.link.max_gbps)}};
    f.affected = {d.bdf};  // one per device: each link trained to its own rate
    f.remedy = "reseat the card or riser, check the slot's lane wiring and BIOS bifurcation settings, and the link "
               "under load (`nvidia-smi -q -d PCIE` or lspci -vv LnkSta)";
    out.push_back(std::move(f));
  }
}

void p2p_refused(const TopologySection& s, std::vector<Finding>& out) {
  int pairs = 0, refused = 0;
  std::map<std::string, int> statuses;
  const report::GpuPair* first = nullptr;
  for (const auto& p : s.gpu_pairs) {
    if (!p.p2p || !p.p2p->read) continue;
    ++pairs;
    if (*p.p2p->read == report::P2pCapability::ok) continue;
    ++refused;
    ++statuses[report::to_string(*p.p2p->read)];
    if (!first) first = &p;
  }
  if (refused == 0) return;
  std::string summary;
  for (const auto& [status, n] : statuses) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, status);
  Finding f;
  f.id = "topology.p2p_not_supported";
  f.severity = Severity::warn;
  // The P2P status comes from NVML on a live run or a recording; a report that says NVML was not
  // used got it elsewhere (a constructed fixture), and the finding says so instead of citing NVML.
  if (s.nvml_source)
    f.title = fmt::format("NVML refuses P2P reads for {} of {} GPU pairs ({})", refused, pairs, summary);
  else
    f.title = fmt::format("P2P reads not supported for {} of {} GPU pairs ({}), as the report records it: NVML was not "
                          "used ({})",
                          refused, pairs, summary, s.nvml_reason.value_or("no reason given"));
  f.evidence = {{"pairs", static_cast<std::int64_t>(pairs)},
                {"refused", static_cast<std::int64_t>(refused)},
                {"example_pair", first->a_bdf + " " + first->b_bdf},
                {"example_status", report::to_string(*first->p2p->read)},
                {"example_path", first->path}};
  f.remedy = "copies between these GPUs are staged through host memory; in a VM give every GPU the same P2P clique "
             "(QEMU vfio-pci x-nv-gpudirect-clique=N), on bare metal check ACS and IOMMU settings; then verify with a "
             "checked transfer (`interprobe bw`)";
  out.push_back(std::move(f));
}

// NCCL uses P2P up to PXB by default; farther pairs go through host memory (NCCL_P2P_LEVEL).
void beyond_nccl_p2p(const TopologySection& s, std::vector<Finding>& out) {
  std::map<std::string, int> far;
  for (const auto& p : s.gpu_pairs)
    if (p.nvlink_count == 0 && (p.pcie_path == report::PciePath::PHB || p.pcie_path == report::PciePath::NODE ||
                                p.pcie_path == report::PciePath::SYS))
      ++far[report::to_string(p.pcie_path)];
  if (far.empty()) return;
  int total = 0;
  std::string summary;
  for (const auto& [path, n] : far) {
    total += n;
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, path);
  }
  Finding f;
  f.id = "topology.pairs_beyond_nccl_p2p";
  f.severity = Severity::info;
  f.title = fmt::format("{} of {} GPU pairs are beyond a PCIe switch ({}): NCCL does not use P2P there by default", total,
                        s.gpu_pairs.size(), summary);
  f.evidence = {{"pairs", static_cast<std::int64_t>(s.gpu_pairs.size())}, {"beyond_pxb", static_cast<std::int64_t>(total)},
                {"classes", summary}};
  f.remedy = "expect staged (slower) GPU-to-GPU traffic for these pairs; keep communicating ranks on GPUs under one "
             "switch, or measure NCCL_P2P_LEVEL=SYS against the default with `interprobe allreduce`";
  out.push_back(std::move(f));
}

// GPUDirect RDMA works best when the NIC shares a switch with the GPU.
void far_rdma_nic(const TopologySection& s, std::vector<Finding>& out) {
  bool has_rdma = std::any_of(s.pci_devices.begin(), s.pci_devices.end(),
                              [](const auto& d) { return d.kind == report::PciKind::infiniband || d.vendor_id == "15b3"; });
  if (!has_rdma) return;
  std::vector<std::string> gpus, nics, labels;
  for (const auto& g : s.gpus) {
    if (g.nearest_nics.empty()) continue;
    const auto& n = g.nearest_nics.front();
    if (n.pcie_path != report::PciePath::NODE && n.pcie_path != report::PciePath::SYS) continue;
    gpus.push_back(g.bdf);
    nics.push_back(n.bdf);
    labels.push_back(fmt::format("GPU{} ({}, {})", g.index, g.bdf, report::to_string(n.pcie_path)));
  }
  if (gpus.empty()) return;
  std::string listed;
  for (const auto& l : labels) listed += (listed.empty() ? "" : ", ") + l;
  Finding f;
  f.id = "topology.gpu_far_from_nic";
  f.severity = Severity::info;
  f.title = fmt::format("{} GPU(s) have no NIC under their host bridge: {}", gpus.size(), listed);
  report::ValueList gpu_list(gpus.begin(), gpus.end()), nic_list(nics.begin(), nics.end());
  f.evidence = {{"gpus", Value(std::move(gpu_list))}, {"nearest_nics", Value(std::move(nic_list))}};
  f.remedy = "GPUDirect RDMA from these GPUs crosses the host bridge or the CPU interconnect; put a NIC under each "
             "GPU's switch or pin its ranks' traffic to the NUMA-local NIC (NCCL_IB_HCA)";
  f.affected = std::move(gpus);
  out.push_back(std::move(f));
}

// Per-device problems only: a tree without /sys/bus/pci (a container) is no fault of the machine.
void unreadable(const TopologySection& s, std::vector<Finding>& out) {
  std::size_t count = 0;
  const std::string* first = nullptr;
  for (const auto& d : s.pci_devices) {
    count += d.warnings.size();
    if (!first && !d.warnings.empty()) first = &d.warnings.front();
  }
  if (count == 0) return;
  Finding f;
  f.id = "topology.sysfs_unreadable";
  f.severity = Severity::info;
  f.title = fmt::format("{} PCI attribute(s) unreadable or garbage; those fields are null", count);
  f.evidence = {{"warnings", static_cast<std::int64_t>(count)}, {"first", *first}};
  f.remedy = "see the warnings under the topology section; re-capture the tree, or check the kernel's sysfs";
  out.push_back(std::move(f));
}

}  // namespace

void rule_topology(const report::Report& r, std::vector<Finding>& out) {
  if (!r.topology) return;
  downtrained_links(*r.topology, out);
  p2p_refused(*r.topology, out);
  beyond_nccl_p2p(*r.topology, out);
  far_rdma_nic(*r.topology, out);
  unreadable(*r.topology, out);
}

}  // namespace interprobe::analysis
