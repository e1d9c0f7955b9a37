// The `virtualization` section as a document: verdict, conflicts, evidence, GPU passthrough
// audit and the host's IOMMU settings.
#include <fmt/format.h>

#include "common/units.hpp"
#include "report/render/document.hpp"

namespace interprobe::render {

namespace {


Tone implies_tone(const report::VirtEvidence& e) {
  if (e.implies.rfind("warning:", 0) == 0) return Tone::warn;
  if (e.value.rfind("unknown", 0) == 0 || e.implies.rfind("nothing", 0) == 0 || e.implies.rfind("hint:", 0) == 0)
    return Tone::dim;
  return Tone::plain;
}

std::string gts(const std::optional<double>& v) { return v ? fmt::format("{:g} GT/s", *v) : "?"; }

std::string link_cell(const report::GpuPassthrough& g) {
  std::string s = fmt::format("gpu {} x{}", gts(g.gpu_max_gts), g.gpu_max_lanes ? std::to_string(*g.gpu_max_lanes) : "?");
  if (g.port_max_gts) s += fmt::format(", port {}", gts(g.port_max_gts));
  if (g.link_synthetic) s += *g.link_synthetic ? " (synthetic)" : " (real)";
  return s;
}

std::string clique_cell(const report::GpuPassthrough& g) {
  if (g.p2p_clique == report::P2pClique::present)
    return fmt::format("clique {} at 0x{:02x}", g.p2p_clique_id.value_or(-1), g.p2p_capability_offset.value_or(0));
  std::string state = report::to_string(g.p2p_clique);
  return g.p2p_clique_reason ? state + ": " + *g.p2p_clique_reason : state;
}

std::string acs_cell(const report::GpuPassthrough& g) {
  if (g.acs_above.empty()) return "-";
  std::string s;
  for (const auto& a : g.acs_above) {
    std::string one = a.unknown_reason            ? *a.unknown_reason
                      : !a.acs_present.value_or(false) ? "no ACS"
                      : a.acs_enabled && !a.acs_enabled->empty() ? *a.acs_enabled
                                                                 : "ACS off";
    s += (s.empty() ? "" : "; ") + a.bdf + ": " + one;
  }
  return s;
}

}  // namespace

void add_virtualization_view(const report::Report& r, Document& doc) {
  if (!r.virtualization) return;
  const auto& v = *r.virtualization;
  Section s{"virtualization", {}};
  KeyValues kv;
  kv.add("hypervisor", Cell(fmt::format("{} ({} confidence)", v.hypervisor, report::to_string(v.confidence)), confidence_tone(v.confidence)));
  kv.add("container", Cell(fmt::format("{} ({} confidence)", v.container, report::to_string(v.container_confidence)),
                           confidence_tone(v.container_confidence)));
  kv.add("product", or_dash(v.product));
  std::string machine = or_dash(v.machine_type);
  if (v.machine_version) machine += " (" + *v.machine_version + ")";
  kv.add("machine type", machine);
  if (v.xen_role) kv.add("xen role", *v.xen_role);
  kv.add("confidential", or_dash(v.confidential));
  kv.add("root-only signals", v.privileged ? Cell("read") : Cell("some unreadable (unknown: needs root)", Tone::dim));
  if (v.numa_node_count) kv.add("numa nodes", std::to_string(*v.numa_node_count));
  s.blocks.push_back(std::move(kv));
  for (const auto& c : v.conflicts) s.blocks.push_back(Paragraph{"conflict: " + c, Tone::warn});

  Table evidence{"evidence", {"source", "value", "implies"}, {}, {}};
  for (const auto& e : v.evidence)
    evidence.rows.push_back({Cell(e.source), Cell(e.value), Cell(e.implies, implies_tone(e))});
  s.blocks.push_back(std::move(evidence));

  if (!v.gpus.empty()) {
    Table gpus{"GPU passthrough audit", {"gpu", "attachment", "link", "numa", "iommu", "p2p clique", "BAR1", "ACS above"}, {}, {}};
    for (const auto& g : v.gpus) {
      std::string bar1 = g.bar1_bytes ? format_bytes(static_cast<std::uint64_t>(*g.bar1_bytes)) : "-";
      if (g.memory_bytes) bar1 += " / " + format_bytes(static_cast<std::uint64_t>(*g.memory_bytes));
      gpus.rows.push_back({Cell(g.bdf + " " + g.vendor_device), Cell(report::to_string(g.attachment)),
                           Cell(link_cell(g), g.link_synthetic.value_or(false) ? Tone::warn : Tone::plain),
                           g.numa_node ? Cell(std::to_string(*g.numa_node)) : Cell("hidden", Tone::warn),
                           Cell(g.iommu_group ? std::to_string(*g.iommu_group) : "-"),
                           Cell(clique_cell(g), g.p2p_clique == report::P2pClique::absent ? Tone::warn : Tone::plain), Cell(bar1),
                           Cell(acs_cell(g), Tone::dim)});
    }
    s.blocks.push_back(std::move(gpus));
    for (const auto& g : v.gpus)
      s.blocks.push_back(Paragraph{g.bdf + ": " + g.attachment_detail + (g.link_detail ? "; " + *g.link_detail : "") +
                                       (g.nvml_virtualization_mode ? "; NVML mode " + std::string(report::to_string(*g.nvml_virtualization_mode)) : "") +
                                       (g.nvml_reason ? "; NVML: " + *g.nvml_reason : ""),
                                   Tone::dim});
  }

  const auto& h = v.host;
  KeyValues host;
  std::string cmdline;
  if (h.intel_iommu) cmdline += "intel_iommu=" + *h.intel_iommu + " ";
  if (h.amd_iommu) cmdline += "amd_iommu=" + *h.amd_iommu + " ";
  if (h.iommu) cmdline += "iommu=" + *h.iommu + " ";
  if (h.vfio_pci_ids) cmdline += "vfio-pci.ids=" + *h.vfio_pci_ids;
  host.add("host iommu cmdline", cmdline.empty() ? "-" : cmdline);
  host.add("iommu groups", std::to_string(h.iommu_group_count));
  std::string vfio;
  for (const auto& b : h.vfio_pci_gpus) vfio += (vfio.empty() ? "" : " ") + b;
  host.add("gpus on vfio-pci", vfio.empty() ? "-" : vfio);
  s.blocks.push_back(std::move(host));
  doc.sections.push_back(std::move(s));
}

}  // namespace interprobe::render
