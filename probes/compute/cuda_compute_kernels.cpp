#include "probes/compute/cuda_compute_kernels.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "probes/gpu/cuda_device.hpp"
#include "probes/gpu/cuda_driver.hpp"

namespace interprobe::compute_kernels {

namespace {

constexpr unsigned kThreads = kThreadsPerBlock;

cu::Function function(int device, const char* name) {
  return cu::module_function(kPtx, device, name, "the compute engine's PTX kernels");
}

// Events around whatever `queue` launches on `stream`, in seconds.
template <class Queue>
double timed(int device, cu::Stream stream, Queue queue) {
  const auto& d = cu::driver();
  cu::Event start = nullptr, end = nullptr;
  cu::check(d.event_create(&start, cu::kEventDefault), "cuEventCreate");
  cu::check(d.event_create(&end, cu::kEventDefault), "cuEventCreate");
  float ms = 0;
  try {
    cu::check(d.event_record(start, stream), "cuEventRecord");
    queue();
    cu::check(d.event_record(end, stream), "cuEventRecord");
    cu::check(d.event_synchronize(end), "cuEventSynchronize");
    cu::check(d.event_elapsed_time(&ms, start, end), "cuEventElapsedTime");
  } catch (...) {
    (void)d.event_destroy(start);
    (void)d.event_destroy(end);
    throw;
  }
  (void)d.event_destroy(start);
  (void)d.event_destroy(end);
  (void)device;
  return static_cast<double>(ms) * 1e-3;
}

}  // namespace

void launch_stream_read(int device, cu::Stream stream, const void* src, std::uint64_t bytes, std::uint64_t* sink,
                        int blocks) {
  void* params[] = {&src, &bytes, &sink};
  cu::check(cu::driver().launch_kernel(function(device, "interprobe_stream_read"), static_cast<unsigned>(std::max(blocks, 1)),
                                       1, 1, kThreads, 1, 1, 0, stream, params, nullptr),
            "interprobe_stream_read");
}

void launch_empty(int device, cu::Stream stream) {
  cu::check(cu::driver().launch_kernel(function(device, "interprobe_empty"), 1, 1, 1, 1, 1, 1, 0, stream, nullptr, nullptr),
            "interprobe_empty");
}

double empty_chain_s(int device, cu::Stream stream, std::uint64_t count) {
  launch_empty(device, stream);  // the module loaded and the function resolved before timing
  cu::check(cu::driver().stream_synchronize(stream), "cuStreamSynchronize");
  return timed(device, stream, [&] {
    for (std::uint64_t i = 0; i < count; ++i) launch_empty(device, stream);
  });
}

std::optional<double> empty_graph_s(int device, cu::Stream stream, std::uint64_t count, std::string& reason) {
  const auto& d = cu::driver();
  if (!d.has_graphs()) {
    reason = "not measured: the CUDA driver lacks the graph entry points (cuStreamBeginCapture, cuGraphInstantiateWithFlags, "
             "cuGraphLaunch)";
    return std::nullopt;
  }
  launch_empty(device, stream);
  cu::check(d.stream_synchronize(stream), "cuStreamSynchronize");
  cu::check(d.stream_begin_capture(stream, cu::kStreamCaptureModeThreadLocal), "cuStreamBeginCapture");
  cu::Graph graph = nullptr;
  try {
    for (std::uint64_t i = 0; i < count; ++i) launch_empty(device, stream);
  } catch (...) {
    (void)d.stream_end_capture(stream, &graph);
    if (graph) (void)d.graph_destroy(graph);
    throw;
  }
  cu::check(d.stream_end_capture(stream, &graph), "cuStreamEndCapture");
  cu::GraphExec exec = nullptr;
  cu::Result rc = d.graph_instantiate(&exec, graph, 0);
  (void)d.graph_destroy(graph);
  cu::check(rc, "cuGraphInstantiateWithFlags");
  double s = 0;
  try {
    cu::check(d.graph_launch(exec, stream), "cuGraphLaunch");  // the first launch uploads the graph: untimed
    cu::check(d.stream_synchronize(stream), "cuStreamSynchronize");
    s = timed(device, stream, [&] { cu::check(d.graph_launch(exec, stream), "cuGraphLaunch"); });
  } catch (...) {
    (void)d.graph_exec_destroy(exec);
    throw;
  }
  (void)d.graph_exec_destroy(exec);
  return s;
}

double empty_single_s(int device, cu::Stream stream, int repeats) {
  const auto& d = cu::driver();
  launch_empty(device, stream);
  cu::check(d.stream_synchronize(stream), "cuStreamSynchronize");
  std::vector<double> times;
  for (int i = 0; i < std::max(repeats, 1); ++i) {
    auto start = std::chrono::steady_clock::now();
    launch_empty(device, stream);
    cu::check(d.stream_synchronize(stream), "cuStreamSynchronize");
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
  return times[times.size() / 2];
}

}  // namespace interprobe::compute_kernels
