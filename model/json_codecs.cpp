// Every struct of the report and its JSON keys: one line per struct. Keys are the member names, so
// renaming a member renames its key (schema and docs/report.md follow; the 1.x upgrade in
// json_upgrade.cpp maps old keys).
#include "model/json_codec.hpp"
#include "model/sections.hpp"

namespace interprobe::report {

// --- top level
INTERPROBE_JSON(LibraryInfo, found, path, version, version_source, driver_version, device_count, reason, simulated, cuda_major)
INTERPROBE_JSON(CompiledFeatures, cuda, nccl, nvml, hwloc, libpci, mpi)
INTERPROBE_JSON(ToolInfo, name, version, features, libraries, libraries_not_probed)
INTERPROBE_JSON(HostInfo, hostname, kernel, root, live, started_at, duration_s)
INTERPROBE_JSON(ProbeRecord, name, status, reason, duration_s)
INTERPROBE_JSON(Finding, id, severity, title, evidence, remedy, affected)

// --- system: model/system_json.cpp (a section's structs may define their JSON in a file of their own)

// --- topology
INTERPROBE_JSON(PciLink, current_gts, max_gts, current_lanes, max_lanes, current_gbps, max_gbps, downtrained)
INTERPROBE_JSON(PciDevice, bdf, vendor_id, device_id, class_id, vendor_name, device_name, kind, driver, parent_bdf,
                root_bus, numa_node, local_cpus, iommu_group, network_name, link, port_type, warnings)
INTERPROBE_JSON(NumaNode, id, cpus, memory_bytes, distances)
INTERPROBE_JSON(CpuPackage, id, cpus, model, numa_nodes)
INTERPROBE_JSON(CpuTopology, logical_cpus, cores, packages, packages_source, numa_nodes)
INTERPROBE_JSON(NvLinkInfo, link, active, version, remote_bdf, remote_kind)
INTERPROBE_JSON(NearNic, bdf, kind, pcie_path)
INTERPROBE_JSON(Gpu, index, bdf, name, uuid, compute_capability, memory_bytes, numa_node, local_cpus, virtualization_mode, nvlinks,
                nearest_nics, nic_paths)
INTERPROBE_JSON(P2pStatus, read, write, atomics, nvlink)
INTERPROBE_JSON(GpuPair, a_bdf, b_bdf, a_index, b_index, pcie_path, nvlink_count, path, bottleneck_gbps, pcie_bottleneck_gbps, p2p)
INTERPROBE_JSON(TopologySection, source, gpu_index_order, nvml_source, nvml_reason, pci_devices, cpu, gpus, gpu_pairs,
                warnings)

// --- virtualization
INTERPROBE_JSON(VirtEvidence, source, family, value, implies)
INTERPROBE_JSON(PciBar, index, size_bytes, prefetchable, is_64bit)
INTERPROBE_JSON(BridgeAcs, bdf, vendor_device, acs_present, p2p_redirect, acs_enabled, unknown_reason)
INTERPROBE_JSON(GpuPassthrough, bdf, vendor_device, device_name, driver, attachment, attachment_detail, path_above,
                link_synthetic, link_detail, gpu_max_gts, gpu_current_gts, gpu_max_lanes, port_max_gts, numa_exposed,
                numa_node, iommu_group, iommu_group_peers, p2p_clique, p2p_clique_reason, p2p_clique_id, p2p_capability_offset,
                nvml_virtualization_mode, nvml_reason, bars, bar1_bytes, memory_bytes, large_bar, acs_above)
INTERPROBE_JSON(HostIommu, intel_iommu, amd_iommu, iommu, passthrough_mode, vfio_pci_ids, iommu_group_count, vfio_pci_gpus)
INTERPROBE_JSON(VirtSection, hypervisor, container, product, machine_type, machine_version, xen_role, confidential,
                confidence, container_confidence, privileged, numa_node_count, conflicts, evidence, host, gpus)

// --- telemetry beside a measurement (issue 19); the telemetry section below
INTERPROBE_JSON(TelemetryAverages, utilization_fraction, power_w, power_limit_fraction, sm_clock_fraction, memory_clock_fraction,
                power_cap_sample_fraction, thermal_sample_fraction, power_cap_time_fraction, thermal_time_fraction, pcie_gbps,
                pcie_capacity_fraction, nvlink_gbps, nvlink_capacity_fraction, sm_active_fraction, sm_occupancy_fraction,
                tensor_active_fraction, dram_active_fraction)
INTERPROBE_JSON(MeasurementTelemetry, span_s, gpu, samples, averages, reason)

// --- bandwidth
INTERPROBE_JSON(BandwidthPoint, bytes, samples, copies_per_sample, min_us, median_us, p95_us, max_us, cv_fraction, gbps,
                verified, stop_reason, median_ci_low_us, median_ci_high_us, visit_medians_us, copy_cpus, telemetry)
INTERPROBE_JSON(BandwidthBuffer, role, bytes, huge_page_bytes)
INTERPROBE_JSON(BandwidthFit, t0_us, peak_gbps, n_half_bytes, residual_fraction, points_used)
INTERPROBE_JSON(BandwidthSweep, engine, kind, src, dst, memory_kind, threads, directions, status, reason, notes, points, fit,
                expected_gbps, expected_basis, pages, buffers)
INTERPROBE_JSON(BandwidthEngineStatus, engine, status, reason, notes, cycle_ns)
INTERPROBE_JSON(P2pPairTruth, src, dst, truth, peer_access_claimed, p2p_gbps, staged_gbps, p2p_latency_us,
                staged_latency_us, reason)
INTERPROBE_JSON(BandwidthSection, plan, target_cv_fraction, passes, thp_mode, engines, sweeps, p2p_pairs)

// --- collective
INTERPROBE_JSON(AllreducePoint, bytes, elements_per_rank, dtype, in_place, iterations, samples, time_us, min_us, max_us,
                algbw_gbps, busbw_gbps, rank_mean_time_us, rank_mean_busbw_gbps, wrong_elements, telemetry)
INTERPROBE_JSON(AllreduceSummary, latency_bytes, latency_us, peak_busbw_gbps, plateau_busbw_gbps, plateau_from_bytes,
                half_plateau_bytes, wrong_elements_total)
INTERPROBE_JSON(CollectiveTransport, transport, connections)
INTERPROBE_JSON(CollectiveAlgorithm, bytes, algorithm, protocol, calls)
INTERPROBE_JSON(AllreduceSweep, collective, backend, ranks, nodes, dtype, variant, op, library_version, devices, warmup_iterations,
                timeout_s, status, reason, hung_at_bytes, notes, environment, transports, algorithms, points, summary)
INTERPROBE_JSON(CollectiveSection, allreduce, sweeps)

// --- compute
INTERPROBE_JSON(ComputeTiming, samples, ops_per_sample, min_us, median_us, p95_us, max_us, cv_fraction, median_ci_low_us,
                median_ci_high_us, stop_reason)
INTERPROBE_JSON(GemmCheck, passed, elements_checked, max_relative_error, tolerance)
INTERPROBE_JSON(GemmPoint, shape, m, n, k, dtype, timing, tflops, flop_per_byte, weight_bytes, weight_gbps, peak_fraction,
                memory_bandwidth_fraction, bound, check, telemetry)
INTERPROBE_JSON(ComputePeak, dtype, size, timing, measured_tflops, published_tflops, published_basis, check, telemetry)
INTERPROBE_JSON(MemoryCeiling, name, threads, bytes, timing, gbps)
INTERPROBE_JSON(DtypeSupport, dtype, supported, reason, weight_only)
INTERPROBE_JSON(ComputeEngineResult, engine, status, reason, library, library_version, device, threads, simulated, dtypes,
                memory, memory_ceiling_gbps, launch_floor_us, launch_floor_reason, launch_floor_graph_us, peaks, points, notes)
INTERPROBE_JSON(ComputeSection, plan, target_cv_fraction, engines)

// --- telemetry
INTERPROBE_JSON(TelemetryWindow, start_s, end_s, samples, averages, classification, rule, reason, candidates, decide_with)
INTERPROBE_JSON(TelemetryGpu, index, bdf, name, power_limit_w, sm_clock_max_mhz, pcie_capacity_gbps, nvlink_capacity_gbps,
                gpm_reason, unsupported, overall, windows)
INTERPROBE_JSON(TelemetrySection, source, trace, interval_s, window_s, duration_s, samples, gpus)

// --- bottlenecks
INTERPROBE_JSON(CategoryTime, category, time_us, provenance)
INTERPROBE_JSON(StepCounts, weight_bytes, cache_bytes, flops, all_reduces, all_reduce_bytes, kernels_estimated, experts_touched)
INTERPROBE_JSON(BatchEstimate, batch, counts, categories, modeled_step_us, tokens_per_s, provenance, bottleneck,
                bottleneck_fraction, observed_step_us, residual_us)
INTERPROBE_JSON(WhatIf, change, batch, tokens_per_s, gain_fraction, provenance, note)
INTERPROBE_JSON(LayoutCollective, purpose, collective, ranks, bytes, calls, us, provenance)
INTERPROBE_JSON(LayoutOption, name, attention_tp, attention_dp, expert_tp, expert_ep, batch, weight_bytes_per_gpu,
                kv_bytes_per_gpu, gpu_memory_bytes, over_by_bytes, memory_read_us, communication_us, modeled_step_us,
                limited_by, provenance, collectives)
INTERPROBE_JSON(WorkloadEstimate, model, model_type, config, weight_dtype, tp, context_tokens, batches,
                gemm_overtakes_communication_at_batch, what_ifs, not_priced, notes,
                verdict, lever, confidence, confidence_reason, observed, layouts)
INTERPROBE_JSON(BottleneckSection, sources, workloads)

// --- the report: sections of probes that did not run are left out rather than null
INTERPROBE_JSON(Report, INTERPROBE_REPORT_MEMBERS)

json report_to_json(const Report& report) {
  json j = report;
  for (const auto& section : kSections) {
    const std::string key(section.name);
    if (section.in_report_json && j[key].is_null()) j.erase(key);
  }
  return j;
}

Report report_from_json(const json& j) { return j.get<Report>(); }

json collective_section_to_json(const CollectiveSection& c) { return c; }
CollectiveSection collective_section_from_json(const json& j) { return j.get<CollectiveSection>(); }

// --- evidence values: scalars and lists; an object (older tools wrote some) is kept as its text
void to_json(json& j, const Value& v) {
  std::visit([&j](const auto& x) { j = x; }, static_cast<const Value::variant&>(v));
}

void from_json(const json& j, Value& v) {
  if (j.is_null()) v = nullptr;
  else if (j.is_boolean()) v = j.get<bool>();
  else if (j.is_number_integer() && !(j.is_number_unsigned() && j.get<std::uint64_t>() > INT64_MAX)) v = j.get<std::int64_t>();
  else if (j.is_number()) v = j.get<double>();
  else if (j.is_string()) v = j.get<std::string>();
  else if (j.is_array()) v = j.get<ValueList>();
  else v = j.dump();
}

json json_schema(SchemaDefs&, const Value*) {
  return {{"$ref", "#/$defs/evidence_value"}};
}

json generated_report_schema() {
  json schema = schema_document<Report>();
  schema["$defs"]["evidence_value"] = {{"type", json::array({"string", "number", "boolean", "null", "array"})},
                                       {"items", {{"$ref", "#/$defs/evidence_value"}}}};
  return schema;
}

}  // namespace interprobe::report
