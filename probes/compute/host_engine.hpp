#pragma once
// The host compute engine: OpenBLAS (cblas_sgemm for f32, cblas_sbgemm for bf16 where the CPU
// has bf16 instructions) on a chosen number of threads, and a streaming read of DRAM on one
// thread and on all of them. Built only when CMake found OpenBLAS (INTERPROBE_WITH_OPENBLAS).
#include <cstdint>
#include <memory>
#include <string>

#include "probes/compute/compute_engine.hpp"

namespace interprobe {

struct HostComputeOptions {
  unsigned threads = 0;            // 0: every CPU this process may run on
  std::string cpu_flags;           // the "flags" line of /proc/cpuinfo: decides bf16
  std::string cpu_model;           // for the report
  std::uint64_t memory_budget_bytes = 1ull << 30;  // what GEMM buffers may take together
};

// False when this binary was built without OpenBLAS.
bool host_compute_available();
// What to do to get it, for the reason of an unsupported engine.
std::string host_compute_missing_reason();

// Throws UnsupportedError (with how to enable it) when built without OpenBLAS.
std::unique_ptr<ComputeEngine> make_host_compute_engine(const HostComputeOptions& options);

}  // namespace interprobe
