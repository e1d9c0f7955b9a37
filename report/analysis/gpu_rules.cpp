// Rules over the GPU software stack (issue 14 item 3): NVML sees GPUs that CUDA cannot use, and a
// libnccl built for a newer CUDA than the driver supports.
#include <charconv>

#include <fmt/format.h>

#include "report/analysis/findings.hpp"

namespace interprobe::analysis {

namespace {

const report::LibraryInfo* library(const report::Report& r, const char* key) {
  auto it = r.tool.libraries.find(key);
  return it == r.tool.libraries.end() ? nullptr : &it->second;
}

// 12 from "12.4"; nullopt for anything else.
std::optional<std::int64_t> major_of(const std::optional<std::string>& dotted) {
  if (!dotted) return std::nullopt;
  std::int64_t major = 0;
  auto [end, ec] = std::from_chars(dotted->data(), dotted->data() + dotted->size(), major);
  if (ec != std::errc() || end == dotted->data()) return std::nullopt;
  return major;
}

report::Value optional_value(const std::optional<std::string>& s) { return s ? report::Value(*s) : report::Value(nullptr); }
report::Value optional_value(const std::optional<std::int64_t>& n) { return n ? report::Value(*n) : report::Value(nullptr); }

// The live NVML named GPUs (only NVML fills a UUID) and the CUDA driver that was tried could not
// use them: missing, refused (too old), or seeing none. A recorded NVML (--root) says nothing
// about this machine's CUDA, so it does not count.
void rule_cuda_unusable(const report::Report& r, std::vector<report::Finding>& out) {
  if (!r.topology || r.topology->nvml_source != report::NvmlSource::live) return;
  std::vector<std::string> nvml_gpus;
  for (const auto& g : r.topology->gpus)
    if (g.uuid) nvml_gpus.push_back(g.bdf);
  const auto* cuda = library(r, "cuda");
  if (nvml_gpus.empty() || !cuda) return;
  bool sees_none = cuda->device_count && *cuda->device_count == 0;
  if (cuda->found && !cuda->reason && !sees_none) return;
  auto f = make_finding("gpu.cuda_unusable", report::Severity::fail,
                        fmt::format("NVML sees {} GPU(s) but CUDA cannot use them: every CUDA copy and NCCL measurement fails",
                                    nvml_gpus.size()),
                        "read the reason: install or point --cuda-lib at the driver's libcuda.so.1 (same driver as "
                        "libnvidia-ml), upgrade a driver older than CUDA 12.0 (r525), check CUDA_VISIBLE_DEVICES and "
                        "that /dev/nvidia* are accessible in this container");
  f.evidence = {{"nvml_gpu_count", static_cast<std::int64_t>(nvml_gpus.size())},
                {"cuda_found", cuda->found},
                {"cuda_path", optional_value(cuda->path)},
                {"cuda_version", optional_value(cuda->version)},
                {"cuda_device_count", optional_value(cuda->device_count)},
                {"cuda_reason", optional_value(cuda->reason)}};
  f.affected = std::move(nvml_gpus);
  out.push_back(std::move(f));
}

// NCCL built for CUDA 13 on a CUDA 12 driver fails at its first call (an older NCCL on a newer
// driver is fine: drivers run older CUDA code).
void rule_nccl_cuda_mismatch(const report::Report& r, std::vector<report::Finding>& out) {
  const auto* nccl = library(r, "nccl");
  const auto* cuda = library(r, "cuda");
  if (!nccl || !cuda || !nccl->found || !nccl->cuda_major) return;
  auto driver_major = major_of(cuda->version);
  if (!driver_major || *nccl->cuda_major <= *driver_major) return;
  auto f = make_finding(
      "libraries.nccl_cuda_mismatch", report::Severity::warn,
      fmt::format("the loaded libnccl was built for CUDA {} but the driver supports CUDA {}: NCCL measurements fail",
                  *nccl->cuda_major, *cuda->version),
      fmt::format("point --nccl-lib (or INTERPROBE_NCCL_LIB) at an NCCL built for CUDA {0}, e.g. `pip install "
                  "nvidia-nccl-cu{0}` and its site-packages/nvidia/nccl/lib/libnccl.so.2; or upgrade the driver to one "
                  "that supports CUDA {1}",
                  *driver_major, *nccl->cuda_major));
  f.evidence = {{"nccl_path", optional_value(nccl->path)},
                {"nccl_version", optional_value(nccl->version)},
                {"nccl_cuda_major", *nccl->cuda_major},
                {"driver_cuda_version", *cuda->version}};
  out.push_back(std::move(f));
}

}  // namespace

void rule_gpu_stack(const report::Report& r, std::vector<report::Finding>& out) {
  rule_cuda_unusable(r, out);
  rule_nccl_cuda_mismatch(r, out);
}

}  // namespace interprobe::analysis
