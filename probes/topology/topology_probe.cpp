#include "probes/topology/topology_probe.hpp"

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "probes/topology/cpu_numa.hpp"
#include "probes/topology/hwloc_xml.hpp"
#include "probes/topology/nvml_topology.hpp"
#include "probes/topology/pci_inventory.hpp"
#include "common/output_file.hpp"

namespace interprobe {

namespace {

void read_from_sysfs(const HostRoot& root, const TopologyOptions& options, report::TopologySection& s) {
  s.source = report::TopologySource::sysfs;
  s.pci_devices = read_pci_inventory(root, &s.warnings);
  s.cpu = read_cpu_topology(root, s.warnings);
  // GPUs first from PCI alone, so a failing NVML still leaves them in the report.
  derive_gpu_topology(s, nullptr);
  std::string reason;
  std::optional<NvmlTopology> nvml;
  // Without an NVIDIA GPU on the bus NVML has nothing to add; skipping it keeps `topo` fast.
  if (!s.gpus.empty()) nvml = load_nvml_topology(root, &reason, s.warnings);
  else reason = "no NVIDIA GPU in the PCI inventory";
  if (nvml) {
    s.nvml_source = nvml->source;
    derive_gpu_topology(s, &*nvml);
    if (options.record_nvml_to)
      write_output_file(*options.record_nvml_to, encode_nvml_recording(*nvml), "--record-nvml",
                        ExistingOutput::replace_regular);
  } else {
    s.nvml_reason = reason;
    if (options.record_nvml_to)
      throw UnsupportedError(fmt::format("--record-nvml {}: no NVML data to record ({})", *options.record_nvml_to, reason));
  }
}

class TopologyProbe final : public Probe {
 public:
  explicit TopologyProbe(TopologyOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "topology"; }
  void run(const ProbeContext& ctx, report::Report& report) override {
    report.topology.emplace();
    read_topology(ctx.root, options_, *report.topology);
  }

 private:
  TopologyOptions options_;
};

}  // namespace

void read_topology(const HostRoot& root, const TopologyOptions& options, report::TopologySection& s) {
  if (!options.hwloc_xml) {
    read_from_sysfs(root, options, s);
    return;
  }
  s.source = report::TopologySource::hwloc_xml;
  NvmlTopology gpu_data;
  read_hwloc_xml(*options.hwloc_xml, s, gpu_data);
  s.nvml_source.reset();
  s.nvml_reason = "built from an hwloc XML export: NVLinks from its NVLinkBandwidth matrix, no NVML P2P status";
  derive_gpu_topology(s, &gpu_data);
}

std::unique_ptr<Probe> make_topology_probe(TopologyOptions options) { return std::make_unique<TopologyProbe>(std::move(options)); }

}  // namespace interprobe
