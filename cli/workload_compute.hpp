#pragma once
// run's compute probe: GEMMs at the shapes the bottleneck ranking will price, so that every GEMM
// price of the planned workloads is measured or interpolated, never stretched from a shape of
// another size or dtype.
#include <memory>

#include "cli/workload_options.hpp"
#include "probes/compute/compute_sweep.hpp"
#include "probes/runner/probe.hpp"

namespace interprobe::cli {

// For each workload at its TP (given, else the one the report measured: measured_tp) and each
// weight dtype among its GEMMs: the smallest and the largest weight shape of one rank, in that
// dtype, at M = 1 and every batch; f32 for its peak. A model the TP does not fit adds nothing
// (its verdict says why). The timing is the quick plan's, at least 3 samples a point. The host
// engine's points stop after kRunHostGemmSeconds; the rest are noted skipped.
constexpr double kRunHostGemmSeconds = 20;
ComputeRequest workload_compute_request(const PreparedWorkloads& workloads, const report::Report& report);

// The `compute` probe of `run`: builds its request from the report when it runs (after the
// collective probe, so the TP of an MPI run is known).
std::unique_ptr<Probe> make_workload_compute_probe(std::shared_ptr<const PreparedWorkloads> workloads);

}  // namespace interprobe::cli
