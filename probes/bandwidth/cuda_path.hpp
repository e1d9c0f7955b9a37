#pragma once
// One CUDA copy path as the engine runs it (cuda_path_engine.cpp); make_cuda_paths
// (cuda_paths.cpp) decides which exist. No CUDA header.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "probes/bandwidth/copy_engine.hpp"

namespace interprobe {

class NumaPlacement;

struct CudaPathSpec {
  // h2d, d2h, d2d (copy engine: cuMemcpy*Async); h2d_sm, d2h_sm (SM kernel on mapped pinned
  // memory); p2p_write_ce / p2p_read_ce (cuMemcpyPeerAsync issued by the source / the
  // destination GPU, peer access on); p2p_bidir_ce (both ways at once); p2p_write_sm /
  // p2p_read_sm (kernel on the source / destination GPU, peer access on); p2p_off (peer access
  // off: the driver stages); staged_local / staged_remote (explicit D2H + H2D through a
  // double-buffered pinned host buffer on the source GPU's NUMA node / another node).
  std::string kind;
  int src = -1, dst = -1;  // CUDA ordinals; -1 = host memory
  std::string src_name, dst_name;  // "gpu0", "node1"
  bool pinned = true;              // host buffers page-locked (cuMemHostRegister)
  std::optional<int> host_node;    // NUMA node of the host buffer
  std::string placement_note;      // where the host buffer went and why
  int sm_count = 1;                // of the GPU running the SM kernel
  int max_threads_per_sm = 2048;   // of that GPU (CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
  std::uint64_t max_bytes = 0;     // what fits in GPU and host memory
  std::uint64_t chunk_bytes = 4u << 20;  // staged_*: each half of the bounce buffer
  double completion_timeout_s = 60;      // a batch not done by then is a hung copy
};

std::unique_ptr<CopyEngine> make_cuda_path_engine(const CudaPathSpec& spec, std::shared_ptr<const NumaPlacement> numa);

}  // namespace interprobe
