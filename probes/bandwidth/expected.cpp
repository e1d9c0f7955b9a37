#include "probes/bandwidth/expected.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace interprobe {

namespace {

std::string link_label(const report::PciLink& l) {
  std::string speed = l.current_gts ? fmt::format("{:g} GT/s", *l.current_gts) : "? GT/s";
  std::string width = l.current_lanes ? fmt::format("x{}", *l.current_lanes) : "x?";
  return speed + " " + width;
}

}  // namespace

std::optional<ExpectedRate> pcie_path_to_host(const report::TopologySection& t, const std::string& bdf) {
  std::optional<ExpectedRate> slowest;
  std::string current = bdf;
  for (int depth = 0; depth < 16 && !current.empty(); ++depth) {  // bounded: a cycle in bad data cannot hang
    const report::PciDevice* d = t.device(current);
    if (!d) break;
    if (d->link.current_gbps && *d->link.current_gbps > 0 && (!slowest || *d->link.current_gbps < slowest->gbps))
      slowest = ExpectedRate{*d->link.current_gbps,
                             fmt::format("slowest PCIe link {} -> root: {} ({}), raw rate", bdf,
                                         fmt::format("{:.1f} GB/s", *d->link.current_gbps), link_label(d->link))};
    current = d->parent_bdf.value_or("");
  }
  return slowest;
}

std::optional<ExpectedRate> expected_rate(const report::TopologySection& t, const report::BandwidthSweep& s,
                                          const std::map<std::string, std::string>& gpu_bdf) {
  if (s.engine != report::BandwidthEngine::cuda) return std::nullopt;
  auto bdf_of = [&](const std::string& name) -> std::optional<std::string> {
    auto it = gpu_bdf.find(name);
    if (it == gpu_bdf.end()) return std::nullopt;
    return it->second;
  };
  const report::CopyKind k = s.kind;
  if (report::is_host_to_device(k) || report::is_device_to_host(k)) {
    auto gpu = bdf_of(report::is_host_to_device(k) ? s.dst : s.src);
    return gpu ? pcie_path_to_host(t, *gpu) : std::nullopt;
  }
  auto a = bdf_of(s.src), b = bdf_of(s.dst);
  if (!a || !b) return std::nullopt;
  if (report::is_staged_between_gpus(k)) {  // both legs cross the host: the slower one bounds it
    auto up = pcie_path_to_host(t, *a), down = pcie_path_to_host(t, *b);
    if (!up || !down) return std::nullopt;
    ExpectedRate r = up->gbps <= down->gbps ? *up : *down;
    r.basis = "through host memory; " + r.basis;
    return r;
  }
  if (!report::uses_peer_access(k)) return std::nullopt;
  for (const auto& pair : t.gpu_pairs) {
    if (!((pair.a_bdf == *a && pair.b_bdf == *b) || (pair.a_bdf == *b && pair.b_bdf == *a))) continue;
    std::optional<ExpectedRate> r;
    if (pair.nvlink_count > 0) {
      // The topology gives the rate (NVML's link version read with the architecture); without
      // it there is no honest expectation, and the PCIe figure is not the path's.
      if (!pair.bottleneck_gbps) return std::nullopt;
      r = ExpectedRate{*pair.bottleneck_gbps, fmt::format("{} NVLinks x {:.0f} GB/s per direction", pair.nvlink_count,
                                                          *pair.bottleneck_gbps / static_cast<double>(pair.nvlink_count))};
    } else if (pair.pcie_bottleneck_gbps) {
      r = ExpectedRate{*pair.pcie_bottleneck_gbps, fmt::format("slowest PCIe link on the {} path: {:.1f} GB/s raw",
                                                               report::to_string(pair.pcie_path), *pair.pcie_bottleneck_gbps)};
    }
    if (r && s.directions == 2) {  // reports before 2026-12: a bidirectional GB/s summed both directions
      r->gbps *= 2;
      r->basis += ", both directions";
    }
    return r;
  }
  return std::nullopt;
}

}  // namespace interprobe
