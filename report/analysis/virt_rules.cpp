// Findings from the `virtualization` section: what the way the GPUs were passed through will do
// to P2P, NUMA placement and link modelling, and what the host's IOMMU setup implies.
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "common/units.hpp"
#include "report/analysis/findings.hpp"

namespace interprobe::analysis {

namespace {

using report::Finding;
using report::Severity;
using report::Value;
using report::VirtSection;

Value text(std::string s) { return Value(std::move(s)); }
Value number(std::int64_t n) { return Value(n); }

bool in_vm(const VirtSection& v) { return v.hypervisor != "none"; }

std::string where(const VirtSection& v) {
  return v.product ? fmt::format("{} ({})", *v.product, v.hypervisor) : v.hypervisor;
}

bool qemu_family(const VirtSection& v) {
  return v.hypervisor == "kvm" || v.hypervisor == "qemu" ||
         (v.product && (*v.product == "QEMU" || *v.product == "Proxmox VE" || *v.product == "OpenStack" ||
                        *v.product == "KubeVirt"));
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

Value text_list(const std::vector<std::string>& items) {
  report::ValueList out;
  for (const auto& i : items) out.emplace_back(i);
  return Value(std::move(out));
}

void conflicts(const VirtSection& v, std::vector<Finding>& out) {
  if (v.conflicts.empty()) return;
  Finding f = make_finding("virt.signals_disagree", Severity::info,
                   fmt::format("virtualization signals disagree ({} conflict(s)); verdict '{}' at {} confidence",
                               v.conflicts.size(), v.hypervisor, report::to_string(v.confidence)),
                   "read the evidence list: a VMM that sets its own CPUID signature, hides the hypervisor bit or copies "
                   "host DMI misleads tools that trust one signal; the verdict follows systemd's precedence");
  f.evidence = {{"hypervisor", text(v.hypervisor)}, {"product", v.product ? text(*v.product) : Value(nullptr)},
                {"conflict", text(v.conflicts.front())}};
  out.push_back(std::move(f));
}

void p2p_clique(const VirtSection& v, std::vector<Finding>& out) {
  if (!in_vm(v) || v.gpus.size() < 2) return;
  std::vector<std::string> absent, unknown;
  std::set<int> cliques;
  for (const auto& g : v.gpus) {
    if (g.p2p_clique == report::P2pClique::absent) absent.push_back(g.bdf);
    else if (g.p2p_clique == report::P2pClique::unknown) unknown.push_back(g.bdf);
    if (g.p2p_clique_id) cliques.insert(*g.p2p_clique_id);
  }
  std::string how = v.product == std::optional<std::string>("Cloud Hypervisor")
                        ? "Cloud Hypervisor: --device path=/sys/bus/pci/devices/BDF,x_nv_gpudirect_clique=0 for every GPU"
                    : qemu_family(v)
                        ? "QEMU: -device vfio-pci,host=BDF,x-nv-gpudirect-clique=0 on every GPU (Proxmox: args: -set "
                          "device.hostpciN.x-nv-gpudirect-clique=0)"
                        : "ask the platform to inject NVIDIA's GPUDirect clique capability (QEMU x-nv-gpudirect-clique, "
                          "Cloud Hypervisor x_nv_gpudirect_clique) into every GPU";
  if (!absent.empty()) {
    Finding f = make_finding("virt.p2p_clique_missing", Severity::warn,
                     "P2P will be disabled: no clique capability injected (QEMU: vfio-pci x-nv-gpudirect-clique)",
                     how + "; the same clique id on GPUs that may talk directly. NVLink P2P does not need it; verify "
                           "with a checked P2P transfer afterwards");
    f.evidence = {{"where", text(where(v))}, {"gpus_without_clique", number(static_cast<std::int64_t>(absent.size()))},
                  {"gpus", text(join(absent))}};
    f.affected = absent;
    out.push_back(std::move(f));
  }
  if (cliques.size() > 1) {
    Finding f = make_finding("virt.p2p_cliques_split", Severity::warn,
                     fmt::format("GPUs carry {} different P2P clique ids: PCIe P2P only within a clique", cliques.size()),
                     "give every GPU that should reach the others directly the same x-nv-gpudirect-clique id");
    f.evidence = {{"cliques", number(static_cast<std::int64_t>(cliques.size()))}};
    out.push_back(std::move(f));
  }
  if (!unknown.empty() && absent.empty()) {
    Finding f = make_finding("virt.p2p_clique_unchecked", Severity::info,
                     "P2P clique capability not checked: config space past 64 bytes needs root",
                     "run `interprobe virt` as root to see whether the hypervisor injected the clique capability");
    f.evidence = {{"gpus", text(join(unknown))}, {"state", text(report::to_string(v.gpus.front().p2p_clique))},
                  {"reason", v.gpus.front().p2p_clique_reason ? text(*v.gpus.front().p2p_clique_reason) : Value(nullptr)}};
    f.affected = unknown;
    out.push_back(std::move(f));
  }
}

void numa(const VirtSection& v, std::vector<Finding>& out) {
  if (!in_vm(v) || v.gpus.empty()) return;
  std::vector<std::string> hidden;
  for (const auto& g : v.gpus)
    if (!g.numa_exposed) hidden.push_back(g.bdf);
  if (hidden.empty()) return;
  bool multi = v.numa_node_count && *v.numa_node_count >= 2;
  Finding f = make_finding("virt.gpu_numa_hidden", multi ? Severity::warn : Severity::info,
                   "GPU NUMA locality hidden: expose pxb-pcie expander bridges with numa_node",
                   "QEMU: -device pxb-pcie,id=pxbN,bus_nr=B,numa_node=X, a pcie-root-port on it, the GPU behind that "
                   "port (libvirt: <target><node>X</node></target> on the pcie-expander-bus); without it NCCL and the "
                   "driver cannot pick CPU-near buffers; an NCCL_TOPO_FILE is the workaround");
  f.evidence = {{"gpus", text(join(hidden))},
                {"guest_numa_node_count", v.numa_node_count ? number(*v.numa_node_count) : Value(nullptr)},
                {"where", text(where(v))}};
  f.affected = hidden;
  out.push_back(std::move(f));
}

void machine_type(const VirtSection& v, std::vector<Finding>& out) {
  if (v.machine_type != std::optional<std::string>("i440fx") || v.gpus.empty()) return;
  Finding f = make_finding("virt.i440fx_conventional_pci", Severity::warn, "i440fx: GPUs on conventional PCI, use q35",
                   "switch the VM to the q35 machine type (Proxmox: machine: q35 and hostpciN: ...,pcie=1; libvirt: "
                   "machine='q35'): i440fx has no PCIe, so link, extended config space and P2P are not visible");
  f.evidence = {{"machine_type", text(*v.machine_type)},
                {"machine_version", v.machine_version ? text(*v.machine_version) : Value(nullptr)},
                {"gpus", number(static_cast<std::int64_t>(v.gpus.size()))}};
  out.push_back(std::move(f));
}

// One finding per cause: every GPU on the root bus is one fault of the VM's layout, and every GPU
// behind a port that advertises the same slower rate is one fault of how those ports were made.
void links(const VirtSection& v, std::vector<Finding>& out) {
  std::vector<std::string> zeroed;
  std::map<std::pair<double, double>, std::vector<const report::GpuPassthrough*>> slower;  // (gpu, port) GT/s
  for (const auto& g : v.gpus) {
    if (g.attachment == report::Attachment::root_bus_integrated) zeroed.push_back(g.bdf);
    if (g.link_synthetic.value_or(false) && g.port_max_gts && g.gpu_max_gts && *g.port_max_gts + 0.01 < *g.gpu_max_gts)
      slower[{*g.gpu_max_gts, *g.port_max_gts}].push_back(&g);
  }
  if (!zeroed.empty()) {
    Finding f = make_finding("virt.gpu_link_zeroed", Severity::warn,
                     fmt::format("{} GPU(s) sit on the root bus as integrated endpoints: link speed and width read "
                                 "Unknown/0",
                                 zeroed.size()),
                     "attach each GPU behind its own pcie-root-port (QEMU: -device pcie-root-port,id=rpN,chassis=N "
                     "-device vfio-pci,host=BDF,bus=rpN; Proxmox: hostpciN: BDF,pcie=1) so the link is visible");
    f.evidence = {{"gpus", text_list(zeroed)}};
    f.affected = zeroed;
    out.push_back(std::move(f));
  }
  for (const auto& [rates, gpus] : slower) {
    auto [gpu_gts, port_gts] = rates;
    auto gpu_gen = pcie_generation(gpu_gts), port_gen = pcie_generation(port_gts);
    std::vector<std::string> bdfs, ports;
    for (const auto* g : gpus) {
      bdfs.push_back(g->bdf);
      ports.push_back(g->path_above.empty() ? "" : g->path_above.front());
    }
    Finding f = make_finding("virt.emulated_port_slower_than_gpu", Severity::warn,
                     fmt::format("emulated root port advertises {:g} GT/s above a Gen{} GPU: NCCL will model Gen{} "
                                 "({} GPU(s))",
                                 port_gts, gpu_gen.value_or(0), port_gen.value_or(0), gpus.size()),
                     fmt::format("QEMU >= 4.0: -device pcie-root-port,x-speed={:g},x-width=16 for these GPUs' ports; "
                                 "or give NCCL an NCCL_TOPO_FILE with the real link",
                                 gpu_gts));
    f.evidence = {{"gpu_max_gts", Value(gpu_gts)}, {"port_max_gts", Value(port_gts)}, {"gpus", text_list(bdfs)},
                  {"ports", text_list(ports)}};
    f.affected = bdfs;
    out.push_back(std::move(f));
  }
}

// Grouped by severity: a BAR known smaller than memory (warn) and a small BAR of unknown memory (info).
void bars(const VirtSection& v, std::vector<Finding>& out) {
  constexpr std::int64_t kSmallBarBytes = 256ll << 20;
  std::map<Severity, std::vector<const report::GpuPassthrough*>> small;
  for (const auto& g : v.gpus) {
    bool known_small = g.large_bar == std::optional<bool>(false);
    if (known_small || (!g.memory_bytes && g.bar1_bytes && *g.bar1_bytes <= kSmallBarBytes))
      small[known_small ? Severity::warn : Severity::info].push_back(&g);
  }
  for (auto it = small.rbegin(); it != small.rend(); ++it) {
    const auto& gpus = it->second;
    std::vector<std::string> bdfs, sizes;
    for (const auto* g : gpus) {
      bdfs.push_back(g->bdf);
      sizes.push_back(fmt::format("{}{}", format_bytes(static_cast<std::uint64_t>(g->bar1_bytes.value_or(0))),
                                  g->memory_bytes ? " of " + format_bytes(static_cast<std::uint64_t>(*g->memory_bytes)) : ""));
    }
    Finding f = make_finding("virt.gpu_small_bar", it->first,
                     fmt::format("{} GPU(s) with BAR1 {}: the framebuffer aperture does not cover GPU memory", gpus.size(),
                                 sizes.front()),
                     "host firmware: enable Above 4G Decoding and Resizable BAR; VM with OVMF: enlarge the 64-bit MMIO "
                     "window (QEMU: -fw_cfg name=opt/ovmf/X-PciMmio64Mb,string=262144)");
    f.evidence = {{"gpus", text_list(bdfs)}, {"bar1", text_list(sizes)}};
    f.affected = std::move(bdfs);
    out.push_back(std::move(f));
  }
}

void acs(const VirtSection& v, std::vector<Finding>& out) {
  std::vector<std::string> gpus, bridges;
  for (const auto& g : v.gpus)
    for (const auto& a : g.acs_above) {
      if (!a.p2p_redirect.value_or(false)) continue;
      gpus.push_back(g.bdf);
      bridges.push_back(a.bdf + " " + a.vendor_device + " " + a.acs_enabled.value_or(""));
      break;  // the nearest redirecting bridge per GPU
    }
  if (gpus.empty()) return;
  Finding f = make_finding("virt.acs_redirects_p2p", Severity::warn,
                   fmt::format("ACS redirect enabled on bridges above {} GPU(s): peer-to-peer traffic detours through "
                               "the root complex",
                               gpus.size()),
                   "where the GPUs are not split across VMs, clear ACS Request/Completion Redirect on the switch "
                   "downstream ports (BIOS option, or setpci -s BDF ECAP_ACS+6.w=0); keep it where isolation matters");
  f.evidence = {{"gpus", text_list(gpus)}, {"bridges", text_list(bridges)}};
  f.affected = std::move(gpus);
  out.push_back(std::move(f));
}

void host(const VirtSection& v, std::vector<Finding>& out) {
  const auto& h = v.host;
  if (!h.vfio_pci_gpus.empty() && h.iommu_group_count == 0) {
    Finding f = make_finding("virt.vfio_without_iommu", Severity::fail, "GPUs bound to vfio-pci but the IOMMU is off (no IOMMU groups)",
                     "enable VT-d / AMD-Vi in the firmware and boot with intel_iommu=on (AMD enables it by default)");
    f.evidence = {{"vfio_pci_gpus", text(join(h.vfio_pci_gpus))}};
    out.push_back(std::move(f));
  }
  if (in_vm(v) || v.gpus.empty()) return;
  if (h.iommu_group_count > 0 && !h.passthrough_mode.value_or(false) && h.vfio_pci_gpus.size() < v.gpus.size()) {
    Finding f = make_finding("virt.host_iommu_translated", Severity::info,
                     "IOMMU translates host DMA of the GPUs (no iommu=pt)",
                     "boot with iommu=pt (Intel also intel_iommu=on) so host-owned GPUs bypass translation; reported "
                     "GPU P2P hangs were fixed by it");
    f.evidence = {{"iommu", h.iommu ? text(*h.iommu) : Value(nullptr)},
                  {"intel_iommu", h.intel_iommu ? text(*h.intel_iommu) : Value(nullptr)},
                  {"iommu_group_count", number(h.iommu_group_count)}};
    out.push_back(std::move(f));
  }
  for (const auto& g : v.gpus) {
    std::vector<std::string> foreign;
    std::string slot = g.bdf.substr(0, g.bdf.size() - 2);  // "0000:43:00"
    for (const auto& peer : g.iommu_group_peers)
      if (peer.rfind(slot, 0) != 0) foreign.push_back(peer);
    if (foreign.empty()) continue;
    Finding f = make_finding("virt.iommu_group_shared", Severity::warn,
                     fmt::format("GPU {} shares IOMMU group {} with {} other device(s): they pass through together or not at all",
                                 g.bdf, g.iommu_group.value_or(-1), foreign.size()),
                     "use a slot whose upstream bridge has ACS, or a platform that isolates it; pcie_acs_override is unsafe");
    f.evidence = {{"gpu", text(g.bdf)}, {"peers", text(join(foreign))}};
    f.affected = {g.bdf};  // one per GPU: each group has its own peers
    out.push_back(std::move(f));
  }
}

void guest_modes(const VirtSection& v, std::vector<Finding>& out) {
  std::vector<std::string> vgpus;
  for (const auto& g : v.gpus)
    if (g.nvml_virtualization_mode == report::VirtualizationMode::vgpu) vgpus.push_back(g.bdf);
  if (!vgpus.empty()) {
    Finding f = make_finding("virt.vgpu", Severity::info,
                     fmt::format("{} GPU(s) are vGPUs: P2P, NVLink and profiling are limited", vgpus.size()),
                     "for interconnect work use full passthrough (NVML mode passthrough) or bare metal");
    f.evidence = {{"gpus", text_list(vgpus)}, {"nvml_virtualization_mode", text(report::to_string(report::VirtualizationMode::vgpu))}};
    f.affected = std::move(vgpus);
    out.push_back(std::move(f));
  }
  if (v.confidential && !v.gpus.empty()) {
    Finding f = make_finding("virt.confidential_guest", Severity::info,
                     fmt::format("confidential guest ({}): GPU transfers go through encrypted bounce buffers", *v.confidential),
                     "expect lower host-device bandwidth and higher latency than in a plain VM; compare like with like");
    f.evidence = {{"confidential", text(*v.confidential)}};
    out.push_back(std::move(f));
  }
}

}  // namespace

void rule_virtualization(const report::Report& r, std::vector<report::Finding>& out) {
  if (!r.virtualization) return;
  const VirtSection& v = *r.virtualization;
  conflicts(v, out);
  p2p_clique(v, out);
  numa(v, out);
  machine_type(v, out);
  links(v, out);
  bars(v, out);
  acs(v, out);
  host(v, out);
  guest_modes(v, out);
}

}  // namespace interprobe::analysis
