// Which CUDA paths this machine has, and where their host buffers go.
#include <algorithm>

#include <fmt/format.h>

#include "probes/bandwidth/cuda_engine.hpp"
#include "probes/bandwidth/cuda_path.hpp"
#include "probes/gpu/cuda_device.hpp"
#include "probes/bandwidth/host_memory.hpp"
#include "common/host_root.hpp"
#include "common/text.hpp"

namespace interprobe {

namespace {

struct GpuSite {
  cuda::DeviceInfo info;
  std::string name;             // gpuN, N in PCI bus order
  std::optional<int> numa_node; // from sysfs; null when -1 or unreadable
};

std::optional<int> numa_node_of(const HostRoot& root, const std::string& bdf) {
  auto text = root.read_text("/sys/bus/pci/devices/" + bdf + "/numa_node");
  if (!text) return std::nullopt;
  auto value = parse_int(*text);
  if (!value || *value < 0 || *value > 65535) return std::nullopt;  // -1: no node; beyond: garbage
  return static_cast<int>(*value);
}

// The paths of one machine: each GPU's host paths, then each pair's peer and staged paths, each
// spec sized to the memory its buffers need and placed on the GPU's NUMA node where it can be.
class CudaPathsBuilder {
 public:
  CudaPathsBuilder(const CudaPlan& plan, std::shared_ptr<const NumaPlacement> numa, const HostRoot& root)
      : plan_(plan), numa_(std::move(numa)), nodes_(numa_->nodes()) {
    auto devices = cuda::enumerate_devices();  // UnsupportedError without driver or device
    for (std::size_t i = 0; i < devices.size(); ++i) {
      GpuSite g{devices[i], fmt::format("gpu{}", i), numa_node_of(root, devices[i].bdf)};
      out_.gpu_bdf[g.name] = g.info.bdf;
      out_.notes.push_back(fmt::format("{} = {} ({}, CUDA device {}, NUMA node {})", g.name, g.info.bdf, g.info.name,
                                       g.info.ordinal, g.numa_node ? std::to_string(*g.numa_node) : "unknown"));
      gpus_.push_back(std::move(g));
    }
    host_limit_ = host_memory_available_bytes(root).value_or(std::uint64_t{16} << 30) / 4;
  }

  CudaPaths build() && {
    for (const auto& g : gpus_) add_host_paths(g);
    if (gpus_.size() < 2) {
      out_.notes.push_back(fmt::format("P2P needs two GPUs: {} found; P2P paths are not measured", gpus_.size()));
      if (plan_.every_kind && !gpus_.empty()) add_staged(gpus_[0], gpus_[0]);  // still exercises the staged path
      return std::move(out_);
    }
    for (std::size_t i = 0; i < gpus_.size(); ++i)
      for (std::size_t j = 0; j < gpus_.size(); ++j)
        if (i != j && (plan_.both_directions || j > i)) add_pair_paths(gpus_[i], gpus_[j], i < j);
    return std::move(out_);
  }

 private:
  CudaPathSpec spec(const std::string& kind, const GpuSite* src, const GpuSite* dst, int device_buffers_each) const {
    CudaPathSpec s;
    s.kind = kind;
    s.completion_timeout_s = plan_.completion_timeout_s;
    s.src = src ? src->info.ordinal : -1;
    s.dst = dst ? dst->info.ordinal : -1;
    const GpuSite* gpu = src ? src : dst;
    s.sm_count = gpu->info.sm_count;
    s.max_threads_per_sm = gpu->info.max_threads_per_sm;
    std::uint64_t limit = host_limit_;
    for (const GpuSite* g : {src, dst})
      if (g) limit = std::min<std::uint64_t>(limit, g->info.free_bytes * 8 / 10 / device_buffers_each);
    s.max_bytes = limit;
    s.host_node = gpu->numa_node;
    if (!gpu->numa_node) s.placement_note = fmt::format("{}'s NUMA node is unknown: host buffers are not placed", gpu->name);
    else if (!numa_->can_place()) s.placement_note = numa_->reason();
    else s.placement_note = fmt::format("host buffers on node{}, local to {}", *gpu->numa_node, gpu->name);
    return s;
  }

  static std::string host_name(const GpuSite& g) { return g.numa_node ? fmt::format("node{}", *g.numa_node) : "host"; }

  void add(CudaPathSpec s, std::string src_name, std::string dst_name) {
    s.src_name = std::move(src_name);
    s.dst_name = std::move(dst_name);
    out_.engines.push_back(make_cuda_path_engine(s, numa_));
  }

  void add_host_paths(const GpuSite& g) {
    for (bool pinned : {true, false}) {
      if (!pinned && !plan_.every_kind) continue;
      auto h2d = spec("h2d", nullptr, &g, 1);
      h2d.pinned = pinned;
      add(h2d, host_name(g), g.name);
      auto d2h = spec("d2h", &g, nullptr, 1);
      d2h.pinned = pinned;
      add(d2h, g.name, host_name(g));
    }
    if (plan_.every_kind) {
      add(spec("d2d", &g, &g, 2), g.name, g.name);
      add(spec("h2d_sm", nullptr, &g, 1), host_name(g), g.name);
      add(spec("d2h_sm", &g, nullptr, 1), g.name, host_name(g));
    }
  }

  // Explicit staging through host memory, local to the source GPU and, with two nodes, remote.
  void add_staged(const GpuSite& a, const GpuSite& b) {
    add(spec("staged_local", &a, &b, 2), a.name, b.name);
    if (!a.numa_node || nodes_.size() < 2) return;
    auto remote = std::find_if(nodes_.begin(), nodes_.end(), [&](int n) { return n != *a.numa_node; });
    auto s = spec("staged_remote", &a, &b, 2);
    s.host_node = *remote;
    s.placement_note = fmt::format("bounce buffer on node{}, remote to {} (node{})", *remote, a.name, *a.numa_node);
    add(s, a.name, b.name);
  }

  // `first_of_pair`: a -> b with a before b, where the bidirectional path (both ways at once) runs.
  void add_pair_paths(const GpuSite& a, const GpuSite& b, bool first_of_pair) {
    const bool claimed =
        cuda::can_access_peer(a.info.ordinal, b.info.ordinal) && cuda::can_access_peer(b.info.ordinal, a.info.ordinal);
    out_.peer_claims.push_back({a.name, b.name, claimed});
    if (claimed) {
      add(spec("p2p_write_ce", &a, &b, 1), a.name, b.name);
      if (plan_.every_kind) {
        add(spec("p2p_read_ce", &a, &b, 1), a.name, b.name);
        if (first_of_pair) add(spec("p2p_bidir_ce", &a, &b, 2), a.name, b.name);
        add(spec("p2p_write_sm", &a, &b, 1), a.name, b.name);
        add(spec("p2p_read_sm", &a, &b, 1), a.name, b.name);
      }
    }
    add(spec("p2p_off", &a, &b, 1), a.name, b.name);
    if (plan_.every_kind) add_staged(a, b);
  }

  const CudaPlan& plan_;
  std::shared_ptr<const NumaPlacement> numa_;
  std::vector<int> nodes_;
  std::vector<GpuSite> gpus_;
  std::uint64_t host_limit_ = 0;
  CudaPaths out_;
};

}  // namespace

CudaPaths make_cuda_paths(const CudaPlan& plan, std::shared_ptr<const NumaPlacement> numa, const HostRoot& root) {
  return CudaPathsBuilder(plan, std::move(numa), root).build();
}

}  // namespace interprobe
