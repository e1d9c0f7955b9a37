// The JSON name of every value of every closed vocabulary of the report. The schema lists the
// same names (tests/unit/report_schema_test.cpp checks that they agree).
#include "model/report.hpp"

#define INTERPROBE_ENUM(E, ...)                                   \
  std::span<const EnumName<E>> names(E) {                         \
    static constexpr EnumName<E> table[] = {__VA_ARGS__};         \
    return table;                                                 \
  }

namespace interprobe::report {

INTERPROBE_ENUM(ProbeStatus, {ProbeStatus::ok, "ok"}, {ProbeStatus::unsupported, "unsupported"},
                {ProbeStatus::skipped, "skipped"}, {ProbeStatus::failed, "failed"})
INTERPROBE_ENUM(Severity, {Severity::info, "info"}, {Severity::warn, "warn"}, {Severity::fail, "fail"})
INTERPROBE_ENUM(VersionSource, {VersionSource::library, "library"}, {VersionSource::file_name, "file_name"},
                {VersionSource::soname, "soname"}, {VersionSource::compiled_in, "compiled_in"})

// --- bandwidth
INTERPROBE_ENUM(BandwidthEngine, {BandwidthEngine::host, "host"}, {BandwidthEngine::cuda, "cuda"})
INTERPROBE_ENUM(CopyKind, {CopyKind::memcpy, "memcpy"}, {CopyKind::staged, "staged"}, {CopyKind::h2d, "h2d"},
                {CopyKind::d2h, "d2h"}, {CopyKind::d2d, "d2d"}, {CopyKind::h2d_sm, "h2d_sm"}, {CopyKind::d2h_sm, "d2h_sm"},
                {CopyKind::staged_local, "staged_local"}, {CopyKind::staged_remote, "staged_remote"},
                {CopyKind::p2p_write_ce, "p2p_write_ce"}, {CopyKind::p2p_read_ce, "p2p_read_ce"},
                {CopyKind::p2p_bidir_ce, "p2p_bidir_ce"}, {CopyKind::p2p_write_sm, "p2p_write_sm"},
                {CopyKind::p2p_read_sm, "p2p_read_sm"}, {CopyKind::p2p_off, "p2p_off"})
INTERPROBE_ENUM(MemoryKind, {MemoryKind::pageable, "pageable"}, {MemoryKind::locked, "locked"},
                {MemoryKind::pinned, "pinned"}, {MemoryKind::device, "device"})
INTERPROBE_ENUM(SweepStatus, {SweepStatus::complete, "complete"}, {SweepStatus::interrupted, "interrupted"},
                {SweepStatus::failed, "failed"}, {SweepStatus::unsupported, "unsupported"})
INTERPROBE_ENUM(EngineStatus, {EngineStatus::ok, "ok"}, {EngineStatus::unsupported, "unsupported"},
                {EngineStatus::failed, "failed"}, {EngineStatus::interrupted, "interrupted"})
INTERPROBE_ENUM(StopReason, {StopReason::target_cv, "target_cv"}, {StopReason::budget, "budget"},
                {StopReason::max_samples, "max_samples"}, {StopReason::interrupted, "interrupted"})
INTERPROBE_ENUM(PagePolicy, {PagePolicy::automatic, "auto"}, {PagePolicy::small, "4k"}, {PagePolicy::huge, "2m"})
INTERPROBE_ENUM(ThpMode, {ThpMode::always, "always"}, {ThpMode::madvise, "madvise"}, {ThpMode::never, "never"})
INTERPROBE_ENUM(HostBufferRole, {HostBufferRole::src, "src"}, {HostBufferRole::dst, "dst"},
                {HostBufferRole::bounce, "bounce"})
INTERPROBE_ENUM(P2pTruth, {P2pTruth::p2p, "p2p"}, {P2pTruth::claimed_but_staged, "claimed_but_staged"},
                {P2pTruth::staged, "staged"}, {P2pTruth::corrupt, "corrupt"})
INTERPROBE_ENUM(BandwidthPlan, {BandwidthPlan::quick, "quick"}, {BandwidthPlan::standard, "standard"},
                {BandwidthPlan::full, "full"}, {BandwidthPlan::custom, "custom"})

// --- compute
INTERPROBE_ENUM(ComputeEngineKind, {ComputeEngineKind::host, "host"}, {ComputeEngineKind::cuda, "cuda"})
INTERPROBE_ENUM(ComputeDtype, {ComputeDtype::f32, "f32"}, {ComputeDtype::bf16, "bf16"}, {ComputeDtype::f16, "f16"},
                {ComputeDtype::fp8_e4m3, "fp8_e4m3"})
INTERPROBE_ENUM(RooflineBound, {RooflineBound::memory, "memory"}, {RooflineBound::compute, "compute"},
                {RooflineBound::latency, "latency"})
INTERPROBE_ENUM(ComputePlan, {ComputePlan::quick, "quick"}, {ComputePlan::full, "full"}, {ComputePlan::custom, "custom"})

// --- collective
INTERPROBE_ENUM(AllreduceBackend, {AllreduceBackend::nccl, "nccl"}, {AllreduceBackend::mpi, "mpi"})
INTERPROBE_ENUM(Dtype, {Dtype::float32, "float"}, {Dtype::float16, "half"}, {Dtype::bfloat16, "bfloat16"})
INTERPROBE_ENUM(AllreduceVariant, {AllreduceVariant::default_, "default"}, {AllreduceVariant::p2p_off, "p2p_off"},
                {AllreduceVariant::shm_off, "shm_off"})
INTERPROBE_ENUM(AllreduceStatus, {AllreduceStatus::complete, "complete"}, {AllreduceStatus::hung, "hung"},
                {AllreduceStatus::interrupted, "interrupted"}, {AllreduceStatus::failed, "failed"})
INTERPROBE_ENUM(CollectiveOp, {CollectiveOp::all_reduce, "all_reduce"}, {CollectiveOp::all_gather, "all_gather"},
                {CollectiveOp::reduce_scatter, "reduce_scatter"}, {CollectiveOp::alltoall, "alltoall"},
                {CollectiveOp::broadcast, "broadcast"}, {CollectiveOp::sendrecv, "sendrecv"})

// --- topology
INTERPROBE_ENUM(PciKind, {PciKind::gpu, "gpu"}, {PciKind::nvswitch, "nvswitch"}, {PciKind::nic, "nic"},
                {PciKind::infiniband, "infiniband"}, {PciKind::nvme, "nvme"}, {PciKind::pcie_switch_port, "pcie_switch_port"},
                {PciKind::root_port, "root_port"}, {PciKind::host_bridge, "host_bridge"}, {PciKind::other, "other"})
INTERPROBE_ENUM(PciePortType, {PciePortType::endpoint, "endpoint"}, {PciePortType::legacy_endpoint, "legacy_endpoint"},
                {PciePortType::root_port, "root_port"}, {PciePortType::upstream, "upstream"},
                {PciePortType::downstream, "downstream"}, {PciePortType::pcie_to_pci_bridge, "pcie_to_pci_bridge"},
                {PciePortType::pci_to_pcie_bridge, "pci_to_pcie_bridge"},
                {PciePortType::rc_integrated_endpoint, "rc_integrated_endpoint"},
                {PciePortType::rc_event_collector, "rc_event_collector"})
INTERPROBE_ENUM(PciePath, {PciePath::X, "X"}, {PciePath::PIX, "PIX"}, {PciePath::PXB, "PXB"}, {PciePath::PHB, "PHB"},
                {PciePath::NODE, "NODE"}, {PciePath::SYS, "SYS"}, {PciePath::unknown, "unknown"})
INTERPROBE_ENUM(NicKind, {NicKind::nic, "nic"}, {NicKind::infiniband, "infiniband"})
INTERPROBE_ENUM(PackagesSource, {PackagesSource::hwloc, "hwloc"}, {PackagesSource::sysfs, "sysfs"},
                {PackagesSource::hwloc_xml, "hwloc_xml"}, {PackagesSource::none, "none"})
INTERPROBE_ENUM(TopologySource, {TopologySource::sysfs, "sysfs"}, {TopologySource::hwloc_xml, "hwloc_xml"})
INTERPROBE_ENUM(NvmlSource, {NvmlSource::live, "live"}, {NvmlSource::recorded, "recorded"})
INTERPROBE_ENUM(NvLinkRemoteKind, {NvLinkRemoteKind::gpu, "gpu"}, {NvLinkRemoteKind::nvswitch, "nvswitch"},
                {NvLinkRemoteKind::cpu, "cpu"}, {NvLinkRemoteKind::unknown, "unknown"})
INTERPROBE_ENUM(VirtualizationMode, {VirtualizationMode::none, "none"}, {VirtualizationMode::passthrough, "passthrough"},
                {VirtualizationMode::vgpu, "vgpu"}, {VirtualizationMode::host_vgpu, "host_vgpu"},
                {VirtualizationMode::host_vsga, "host_vsga"}, {VirtualizationMode::unknown, "unknown"})
INTERPROBE_ENUM(P2pCapability, {P2pCapability::ok, "ok"}, {P2pCapability::chipset_not_supported, "chipset_not_supported"},
                {P2pCapability::gpu_not_supported, "gpu_not_supported"},
                {P2pCapability::topology_not_supported, "topology_not_supported"},
                {P2pCapability::disabled_by_regkey, "disabled_by_regkey"}, {P2pCapability::not_supported, "not_supported"},
                {P2pCapability::unknown, "unknown"})

// --- virtualization
INTERPROBE_ENUM(Attachment, {Attachment::root_bus_integrated, "root_bus_integrated"}, {Attachment::root_bus, "root_bus"},
                {Attachment::emulated_root_port, "emulated_root_port"}, {Attachment::emulated_switch, "emulated_switch"},
                {Attachment::real_root_port, "real_root_port"}, {Attachment::real_switch, "real_switch"},
                {Attachment::hyperv_vpci, "hyperv_vpci"}, {Attachment::unknown, "unknown"})
INTERPROBE_ENUM(P2pClique, {P2pClique::present, "present"}, {P2pClique::absent, "absent"}, {P2pClique::unknown, "unknown"})
INTERPROBE_ENUM(Confidence, {Confidence::high, "high"}, {Confidence::medium, "medium"}, {Confidence::low, "low"})

// --- bottlenecks
INTERPROBE_ENUM(Provenance, {Provenance::measured, "measured"}, {Provenance::interpolated, "interpolated"},
                {Provenance::extrapolated, "extrapolated"}, {Provenance::assumed, "assumed"},
                {Provenance::not_measured, "not_measured"})
INTERPROBE_ENUM(StepCategory, {StepCategory::communication_latency, "communication_latency"},
                {StepCategory::communication_bandwidth, "communication_bandwidth"},
                {StepCategory::gemm_memory_bound, "gemm_memory_bound"}, {StepCategory::gemm_compute_bound, "gemm_compute_bound"},
                {StepCategory::cache_reads, "cache_reads"}, {StepCategory::launch_overhead, "launch_overhead"})

// --- telemetry
INTERPROBE_ENUM(TelemetryClass, {TelemetryClass::idle, "idle"}, {TelemetryClass::thermal_limited, "thermal_limited"},
                {TelemetryClass::power_capped, "power_capped"}, {TelemetryClass::interconnect_bound, "interconnect_bound"},
                {TelemetryClass::host_starved, "host_starved"}, {TelemetryClass::compute_bound, "compute_bound"},
                {TelemetryClass::memory_bound, "memory_bound"},
                {TelemetryClass::small_kernel_launch_bound, "small_kernel_launch_bound"},
                {TelemetryClass::latency_occupancy_bound, "latency_occupancy_bound"}, {TelemetryClass::undecided, "undecided"})
INTERPROBE_ENUM(TelemetrySource, {TelemetrySource::live, "live"}, {TelemetrySource::simulated, "simulated"},
                {TelemetrySource::replay, "replay"})

}  // namespace interprobe::report
