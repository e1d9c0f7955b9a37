#pragma once
// The cuda compute engine's own kernels (kernels/compute_kernels.ptx, ISA 8.0): a streaming read
// of device memory (the roofline's memory ceiling) and an empty kernel (the launch floor). The
// device's primary context must be current (cuda::DeviceGuard). Launchers throw VendorError.
#include <cstdint>
#include <optional>
#include <string>

#include "probes/gpu/cuda_driver_api.hpp"

namespace interprobe::compute_kernels {

// Threads per block of interprobe_stream_read (the occupancy sums use it).
inline constexpr int kThreadsPerBlock = 512;

extern const char* const kPtx;  // generated from kernels/compute_kernels.ptx

// Reads [src, src + bytes) once (bytes: a multiple of 16) with `blocks` x 512 threads.
void launch_stream_read(int device, cu::Stream stream, const void* src, std::uint64_t bytes, std::uint64_t* sink,
                        int blocks);
// One block of one thread that does nothing.
void launch_empty(int device, cu::Stream stream);

// The three views of the launch floor, seconds per kernel.
struct LaunchFloor {
  double single_s = 0;                 // launch, then wait for it: launch-to-completion, one at a time (median)
  double chain_s = 0;                  // `count` back-to-back launches between two events, per kernel
  std::optional<double> graph_s;       // the same chain captured in a CUDA graph, per kernel
  std::optional<std::string> graph_reason;  // why graph_s is null
};

// Seconds for `count` back-to-back empty kernels on `stream`, timed by events around them.
double empty_chain_s(int device, cu::Stream stream, std::uint64_t count);
// The chain captured once into a CUDA graph and launched as one graph, timed by events; nullopt
// with `reason` set when the driver lacks the graph entry points.
std::optional<double> empty_graph_s(int device, cu::Stream stream, std::uint64_t count, std::string& reason);
// Launch-to-completion of one empty kernel at a time, host clock, median of `repeats`.
double empty_single_s(int device, cu::Stream stream, int repeats);

}  // namespace interprobe::compute_kernels
