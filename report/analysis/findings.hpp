#pragma once
// Analysis is pure: Report -> findings, same input, same output, deterministic order.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/report.hpp"

namespace interprobe::analysis {

// A finding without evidence yet: every rules file builds its findings with this.
report::Finding make_finding(std::string id, report::Severity severity, std::string title, std::string remedy);
// An evidence value that is null where the report has none.
template <typename T>
report::Value optional_value(const std::optional<T>& v) {
  return v ? report::Value(*v) : report::Value(nullptr);
}

using Rule = std::function<void(const report::Report&, std::vector<report::Finding>&)>;

// Every rule, in the order their findings appear.
const std::vector<Rule>& all_rules();
std::vector<report::Finding> derive_findings(const report::Report& report);

// Rules of the foundation: probe failures and missing vendor libraries.
void rule_probe_failures(const report::Report& report, std::vector<report::Finding>& out);
void rule_vendor_libraries(const report::Report& report, std::vector<report::Finding>& out);
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

}  // namespace interprobe::analysis
