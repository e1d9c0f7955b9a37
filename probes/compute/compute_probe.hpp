#pragma once
// The `compute` probe: every requested compute engine through the shared sweep into
// report.compute (issue 15). The host engine is OpenBLAS; the cuda engine plugs in through
// make_cuda_compute_engine (until it lands: unsupported with the reason).
#include <functional>
#include <memory>

#include "probes/compute/compute_sweep.hpp"
#include "probes/runner/probe.hpp"

namespace interprobe {

// Builds the engine of `kind` for this machine; throws UnsupportedError when it cannot run here.
using ComputeEngineFactory =
    std::function<std::unique_ptr<ComputeEngine>(report::ComputeEngineKind kind, const ProbeContext& ctx, const ComputeRequest& request)>;

// The engines: host = OpenBLAS (or absent when built without it), cuda = cuBLASLt through the CUDA driver.
std::unique_ptr<ComputeEngine> make_compute_engine(report::ComputeEngineKind kind, const ProbeContext& ctx,
                                                   const ComputeRequest& request);

// `factory` replaces make_compute_engine (tests inject doubles).
std::unique_ptr<Probe> make_compute_probe(ComputeRequest request, ComputeEngineFactory factory = make_compute_engine);

}  // namespace interprobe
