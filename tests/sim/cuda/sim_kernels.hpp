#pragma once
// Host implementations of the copy engine's kernels (probes/bandwidth/cuda_kernels.ptx) and the
// compute engine's (probes/compute/kernels/compute_kernels.ptx), found by their .entry names, and the PTX ISA check a real driver does when it JIT-compiles a module.
#include <set>
#include <string>
#include <vector>

namespace interprobe::sim {

class Stream;

enum class Kernel { hold, copy, fill_pattern, count_mismatches, stream_read, empty };

// How many (8-byte) parameters a kernel takes.
int parameter_count(Kernel k);

struct Context;

struct SimModule {
  std::vector<std::string> entries;  // .entry names in the PTX text
  Context* context = nullptr;        // the context it was loaded into
  std::set<std::string> loaded;      // kernels loaded (all at once with CUDA_MODULE_LOADING=EAGER)
};

struct SimFunction {
  Kernel kernel;
};

// The highest PTX ISA (major*10 + minor) a driver of this CUDA version JIT-compiles.
int max_ptx_isa(int driver_version);
// .version of the PTX text (major*10 + minor), -1 when there is none.
int ptx_isa_of(const std::string& ptx);
std::vector<std::string> ptx_entries(const std::string& ptx);
// The host kernel behind an entry name; false when the simulator has none.
bool kernel_by_name(const std::string& name, Kernel& out);
// Runs it with the cuLaunchKernel parameter array, on `stream` (nullptr: synchronously).
int run_kernel(Kernel k, void** params, Stream* stream, int device);

}  // namespace interprobe::sim
