#pragma once
// The report's sections in one table: what each is called in the JSON and the metric paths, the
// probe that fills it, the finding ids that belong to it, its metric rows, and which readers may
// select it. Every list of section names (the JSON writer's, the schema's finding ids, the policy
// checker's, compare's, the metrics view's, `run --only`) comes from here, so a new section is one
// row (docs/architecture.md: how to add a section).
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace interprobe::report {

struct Report;
class MetricTable;

// A section's rows of the metrics view (model/metrics.hpp); nothing when the section is absent.
using MetricRowsFn = void (*)(const Report& report, MetricTable& table);
void probe_metric_rows(const Report&, MetricTable&);  // section_metrics.cpp
void system_metric_rows(const Report&, MetricTable&);
void topology_metric_rows(const Report&, MetricTable&);
void virtualization_metric_rows(const Report&, MetricTable&);
void telemetry_metric_rows(const Report&, MetricTable&);
void bottleneck_metric_rows(const Report&, MetricTable&);
void bandwidth_metric_rows(const Report&, MetricTable&);  // measured_metrics.cpp
void collective_metric_rows(const Report&, MetricTable&);
void compute_metric_rows(const Report&, MetricTable&);

struct SectionInfo {
  std::string_view name;            // JSON key of the report and first segment of its metric paths
  std::string_view probe;           // the probe that fills it; empty: not a probe's (probes, bottlenecks)
  std::string_view finding_prefix;  // finding ids "PREFIX.cause" that this section's probe decides
  bool in_report_json = true;       // a top-level key of the report, left out when its probe did not run
  bool policy_metrics = false;      // a policy's `metric` items may select its rows
  bool policy_facts = false;        // a policy's `fact` items may select its facts
  bool read_not_timed = false;      // its numbers are read from the machine, not timed: equal or changed
  MetricRowsFn metric_rows = nullptr;
  // Every finding id the rules write about it (report/analysis), listed in the schema and in
  // docs/findings.md; a reader accepts ids it does not know.
  std::span<const std::string_view> finding_ids = {};
};

namespace finding_ids {
// The run itself: failed probes, missing or mismatched vendor libraries, the GPU software stack.
inline constexpr std::string_view kRun[] = {"probe.failed", "libraries.nvml_missing", "libraries.nccl_cuda_mismatch",
                                            "gpu.cuda_unusable", "gpu.driver_missing", "gpu.none_on_bus"};
inline constexpr std::string_view kTopology[] = {"topology.gpu_far_from_nic", "topology.link_downtrained",
                                                 "topology.p2p_not_supported", "topology.pairs_beyond_nccl_p2p",
                                                 "topology.sysfs_unreadable"};
inline constexpr std::string_view kVirt[] = {
    "virt.acs_redirects_p2p", "virt.confidential_guest", "virt.emulated_port_slower_than_gpu", "virt.gpu_link_zeroed",
    "virt.gpu_numa_hidden", "virt.gpu_small_bar", "virt.host_iommu_translated", "virt.i440fx_conventional_pci",
    "virt.iommu_group_shared", "virt.p2p_clique_missing", "virt.p2p_clique_unchecked", "virt.p2p_cliques_split",
    "virt.signals_disagree", "virt.vfio_without_iommu", "virt.vgpu"};
inline constexpr std::string_view kBandwidth[] = {
    "bandwidth.below_expected", "bandwidth.data_corrupted", "bandwidth.engine_failed", "bandwidth.engine_unsupported",
    "bandwidth.mixed_page_backing", "bandwidth.noisy", "bandwidth.p2p_claimed_but_staged", "bandwidth.p2p_data_corrupted",
    "bandwidth.p2p_unavailable", "bandwidth.sizes_capped", "bandwidth.sweep_incomplete"};
inline constexpr std::string_view kCollective[] = {"collective.allreduce_hung", "collective.allreduce_wrong",
                                                   "collective.p2p_gain", "collective.p2p_slower", "collective.sweep_failed"};
inline constexpr std::string_view kCompute[] = {"compute.decode_memory_bound", "compute.engine_failed",
                                                "compute.engine_unsupported", "compute.inconsistent_point",
                                                "compute.peak_below_shape", "compute.verification_failed"};
}  // namespace finding_ids

// In `interprobe run`'s order; "probes" (each probe's status and duration) is not a report section.
inline constexpr SectionInfo kSections[] = {
    {.name = "probes", .in_report_json = false, .policy_metrics = true, .policy_facts = true,
     .metric_rows = probe_metric_rows, .finding_ids = finding_ids::kRun},
    {.name = "system", .probe = "system", .policy_metrics = true, .read_not_timed = true, .metric_rows = system_metric_rows},
    {.name = "topology", .probe = "topology", .finding_prefix = "topology", .policy_metrics = true, .policy_facts = true,
     .read_not_timed = true, .metric_rows = topology_metric_rows, .finding_ids = finding_ids::kTopology},
    {.name = "virtualization", .probe = "virtualization", .finding_prefix = "virt", .policy_metrics = true,
     .policy_facts = true, .read_not_timed = true, .metric_rows = virtualization_metric_rows,
     .finding_ids = finding_ids::kVirt},
    {.name = "bandwidth", .probe = "bandwidth", .finding_prefix = "bandwidth", .policy_metrics = true,
     .policy_facts = true, .metric_rows = bandwidth_metric_rows, .finding_ids = finding_ids::kBandwidth},
    {.name = "collective", .probe = "collective", .finding_prefix = "collective", .policy_metrics = true,
     .metric_rows = collective_metric_rows, .finding_ids = finding_ids::kCollective},
    {.name = "compute", .probe = "compute", .finding_prefix = "compute", .policy_metrics = true,
     .metric_rows = compute_metric_rows, .finding_ids = finding_ids::kCompute},
    {.name = "telemetry", .probe = "telemetry", .metric_rows = telemetry_metric_rows},
    {.name = "bottlenecks", .policy_metrics = true, .policy_facts = true, .metric_rows = bottleneck_metric_rows},
};

// The names of the sections with `flag` set, in table order.
std::vector<std::string> section_names(bool SectionInfo::*flag);
// The names of the sections a probe fills, in `interprobe run`'s order.
std::vector<std::string> probe_names();

}  // namespace interprobe::report
