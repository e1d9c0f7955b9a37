#pragma once
// The CUDA copy engine's paths (cuda_paths.cpp), over the driver API opened at run time: built
// on every machine, toolkit or not. No vendor header: callers see CopyEngines and plain data.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "probes/bandwidth/copy_engine.hpp"

namespace interprobe {

class HostRoot;
class NumaPlacement;

struct CudaPlan {
  bool every_kind = false;       // SM-kernel variants, pageable both ways, read direction
  bool both_directions = false;  // every ordered GPU pair instead of each pair once
  // How long a batch of copies may take before it counts as hung (the sweep of that path then
  // fails with the reason instead of waiting for ever).
  double completion_timeout_s = 60;
};

struct PeerClaim {
  std::string src, dst;  // "gpu0", "gpu1"
  bool can_access_peer = false;  // cuDeviceCanAccessPeer(src, dst)
};

struct CudaPaths {
  std::vector<std::unique_ptr<CopyEngine>> engines;  // one per path, buffers not yet allocated
  std::map<std::string, std::string> gpu_bdf;        // "gpu0" -> "0000:1b:00.0"
  std::vector<PeerClaim> peer_claims;
  std::vector<std::string> notes;  // e.g. "P2P needs two GPUs: 1 found"
};

// Throws UnsupportedError with the reason when there is no driver, a driver older than CUDA
// 12.0, or no device. GPUs are numbered in PCI bus order (CUDA_DEVICE_ORDER=PCI_BUS_ID unless the
// environment already chose), the order the topology section uses.
CudaPaths make_cuda_paths(const CudaPlan& plan, std::shared_ptr<const NumaPlacement> numa, const HostRoot& root);

}  // namespace interprobe
