// Rules over the GPU software stack (issue 14 item 3): NVML sees GPUs that CUDA cannot use, and a
// libnccl built for a newer CUDA than the driver supports.
#include <charconv>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// The GPU presence contract (issue 36): a GPU machine whose bus shows no NVIDIA GPU, or shows GPUs
// that no NVIDIA driver holds, measures nothing GPU-related; that is a finding, not a line in the
// topology section, so a gate (--fail-on warn, a policy item) can stop on it.
void rule_no_gpu_on_bus(const report::Report& r, std::vector<report::Finding>& out) {
  if (!r.topology || !r.topology->gpus.empty()) return;
  auto f = make_finding("gpu.none_on_bus", report::Severity::warn,
                        "no NVIDIA GPU on the PCI bus: nothing GPU-related (P2P, copies, NCCL, GEMM) can be measured",
                        "if this machine should have GPUs: check the VM's passthrough (Proxmox hostpci, libvirt <hostdev>, "
                        "the cloud instance type), `lspci -d 10de:` on the host, and that the GPUs are powered and seated");
  f.evidence = {{"pci_device_count", static_cast<std::int64_t>(r.topology->pci_devices.size())},
                {"nvidia_gpu_count", std::int64_t{0}}};
  out.push_back(std::move(f));
}

// Kernel drivers that hand a GPU to a VM: such a GPU is not meant to be used here.
bool passed_on(const std::optional<std::string>& driver) {
  return driver && (*driver == "vfio-pci" || *driver == "pci-stub");
}

void rule_gpus_without_driver(const report::Report& r, std::vector<report::Finding>& out) {
  if (!r.topology || r.topology->gpus.empty()) return;
  std::vector<std::string> unbound;
  std::set<std::string> drivers;
  for (const auto& g : r.topology->gpus) {
    const report::PciDevice* d = r.topology->device(g.bdf);
    if (!d) continue;  // not in the inventory: nothing known about its driver
    const std::optional<std::string>& driver = d->driver;
    if (passed_on(driver) || driver == std::optional<std::string>("nvidia")) continue;
    unbound.push_back(g.bdf);
    drivers.insert(driver.value_or("none"));
  }
  // NVML missing on the live machine while the kernel driver holds the GPUs: the user-space half
  // of the driver is absent (a container without the NVIDIA runtime, a half-installed driver).
  bool nvml_missing = r.host.live && !r.topology->nvml_source && unbound.empty();
  if (unbound.empty() && !nvml_missing) return;
  std::string title =
      unbound.empty()
          ? fmt::format("{} NVIDIA GPU(s) on the PCI bus but NVML could not load: no driver user space, nothing GPU-related "
                        "can be measured",
                        r.topology->gpus.size())
          : fmt::format("{} of {} NVIDIA GPU(s) on the PCI bus have no NVIDIA driver bound (driver: {}): CUDA, NVML and "
                        "NCCL cannot use them",
                        unbound.size(), r.topology->gpus.size(), fmt::join(drivers, ", "));
  auto f = make_finding("gpu.driver_missing", report::Severity::warn, std::move(title),
                        "install the NVIDIA driver (nvidia-smi must list the GPUs), unbind nouveau, and in a container run "
                        "with the NVIDIA container runtime (--gpus all) so libnvidia-ml.so.1 and /dev/nvidia* are inside");
  f.evidence = {{"gpu_count", static_cast<std::int64_t>(r.topology->gpus.size())},
                {"gpus_without_nvidia_driver", static_cast<std::int64_t>(unbound.size())},
                {"nvml_reason", optional_value(r.topology->nvml_reason)}};
  f.affected = unbound.empty() ? std::vector<std::string>{} : std::move(unbound);
  out.push_back(std::move(f));
}

}  // namespace

void rule_gpu_stack(const report::Report& r, std::vector<report::Finding>& out) {
  rule_no_gpu_on_bus(r, out);
  rule_gpus_without_driver(r, out);
  rule_cuda_unusable(r, out);
  rule_nccl_cuda_mismatch(r, out);
}

}  // namespace interprobe::analysis
