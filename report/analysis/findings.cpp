#include "report/analysis/findings.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace interprobe::analysis {

report::Finding make_finding(std::string id, report::Severity severity, std::string title, std::string remedy) {
  report::Finding f;
  f.id = std::move(id);
  f.severity = severity;
  f.title = std::move(title);
  f.remedy = std::move(remedy);
  return f;
}

void rule_probe_failures(const report::Report& r, std::vector<report::Finding>& out) {
  for (const auto& p : r.probes) {
    if (p.status != report::ProbeStatus::failed) continue;
    report::Finding f;
    f.id = "probe.failed";
    f.severity = report::Severity::warn;
    f.title = fmt::format("probe '{}' failed; its section is missing or partial", p.name);
    f.evidence = {{"probe", p.name}, {"reason", p.reason ? report::Value(*p.reason) : report::Value(nullptr)}};
    f.remedy = "read the reason; if it names an input file fix or regenerate it, otherwise report the message as a bug";
    out.push_back(std::move(f));
  }
}

void rule_vendor_libraries(const report::Report& r, std::vector<report::Finding>& out) {
  if (!r.host.live) return;
  // An inventory without NVIDIA GPUs needs no NVML; --verbose lists it missing all the same.
  if (r.topology && r.topology->gpus.empty()) return;
  // With the topology read, gpu.driver_missing says it (with the GPUs); one finding, not two.
  if (r.topology && !r.topology->nvml_source) return;
  auto nvml = r.tool.libraries.find("nvml");
  if (nvml != r.tool.libraries.end() && !nvml->second.found) {
    report::Finding f;
    f.id = "libraries.nvml_missing";
    f.severity = report::Severity::info;
    f.title = "NVML not found: no GPU names, P2P status, NVLink state or telemetry";
    f.evidence = {{"reason", nvml->second.reason ? report::Value(*nvml->second.reason) : report::Value(nullptr)}};
    f.remedy = "on a GPU machine install the NVIDIA driver (it ships libnvidia-ml.so.1) or pass --nvml-lib PATH";
    out.push_back(std::move(f));
  }
}

// Each section's rules live in its own file; a new section adds its line here and to all_rules().
// The topology section: downtrained links, refused P2P, pairs beyond NCCL P2P, far NICs (topology_rules.cpp).
void rule_topology(const report::Report& report, std::vector<report::Finding>& out);
// The virtualization section: passthrough, P2P clique, NUMA, link modelling, host IOMMU (virt_rules.cpp).
void rule_virtualization(const report::Report& report, std::vector<report::Finding>& out);
// The collective section: hung or wrong all-reduces, failed variants, P2P on vs off (collective_rules.cpp).
void rule_collective(const report::Report& report, std::vector<report::Finding>& out);
// The bandwidth section: corrupted copies, P2P truth, below-expected links, noise (bandwidth_rules.cpp).
void rule_bandwidth(const report::Report& report, std::vector<report::Finding>& out);
// The compute section: wrong GEMM results, decode GEMMs bound by memory, inconsistent points (compute_rules.cpp).
void rule_compute(const report::Report& report, std::vector<report::Finding>& out);
// The GPU software stack: NVML sees GPUs CUDA cannot use, NCCL built for a newer CUDA (gpu_rules.cpp).
void rule_gpu_stack(const report::Report& report, std::vector<report::Finding>& out);

const std::vector<Rule>& all_rules() {
  static const std::vector<Rule> rules = {rule_probe_failures, rule_vendor_libraries, rule_gpu_stack, rule_topology, rule_virtualization, rule_collective, rule_bandwidth, rule_compute};
  return rules;
}

std::vector<report::Finding> derive_findings(const report::Report& r) {
  std::vector<report::Finding> out;
  for (const auto& rule : all_rules()) rule(r, out);
  // Most severe first; rule order breaks ties, so output is deterministic.
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.severity > b.severity; });
  return out;
}

}  // namespace interprobe::analysis
