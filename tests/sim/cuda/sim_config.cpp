#include "sim_config.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace interprobe::sim {

namespace {

using nlohmann::json;

LinkModel read_link(const json& j, const char* key, LinkModel fallback) {
  if (!j.contains(key)) return fallback;
  const auto& l = j.at(key);
  fallback.gbps = l.value("gbps", fallback.gbps);
  fallback.latency_us = l.value("latency_us", fallback.latency_us);
  if (!(fallback.gbps > 0) || fallback.latency_us < 0)
    throw std::runtime_error(fmt::format("links.{}: gbps must be > 0 and latency_us >= 0", key));
  return fallback;
}

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Threads per SM: CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"
// ("Maximum number of resident threads per SM"). SM counts, L2 sizes, bandwidths and PCIe
// generations: the product's datasheet or architecture whitepaper named in `source`.
constexpr KnownGpu kKnownGpus[] = {
    {"NVIDIA H100 80GB HBM3", 9, 0, 132, 2048, 50 * kMiB, 3350, 5,
     "NVIDIA H100 Tensor Core GPU Architecture whitepaper (H100 SXM5: 132 SMs, 50 MB L2); H100 datasheet (SXM: 3.35 TB/s, PCIe Gen5)"},
    {"NVIDIA H200", 9, 0, 132, 2048, 50 * kMiB, 4800, 5,
     "NVIDIA H200 datasheet (SXM: 4.8 TB/s HBM3e, PCIe Gen5); same GH100 die as H100 SXM5 (132 SMs, 50 MB L2)"},
    {"NVIDIA B200", 10, 0, 148, 2048, 126 * kMiB, 8000, 6,
     "NVIDIA Blackwell architecture technical brief / HGX B200 datasheet (8 TB/s per GPU, PCIe Gen6 host link)"},
    {"NVIDIA A100-SXM4-80GB", 8, 0, 108, 2048, 40 * kMiB, 2039, 4,
     "NVIDIA A100 Tensor Core GPU Architecture whitepaper (108 SMs, 40 MB L2); A100 datasheet (80GB SXM: 2,039 GB/s, PCIe Gen4)"},
    {"NVIDIA A100 80GB PCIe", 8, 0, 108, 2048, 40 * kMiB, 1935, 4,
     "NVIDIA A100 whitepaper (108 SMs, 40 MB L2); A100 datasheet (80GB PCIe: 1,935 GB/s, PCIe Gen4)"},
    {"NVIDIA L40S", 8, 9, 142, 1536, 96 * kMiB, 864, 4,
     "NVIDIA Ada Lovelace architecture whitepaper (AD102: 96 MB L2); L40S datasheet (142 SMs, 864 GB/s, PCIe Gen4)"},
    {"NVIDIA L4", 8, 9, 58, 1536, 48 * kMiB, 300, 4,
     "NVIDIA L4 datasheet (300 GB/s, PCIe Gen4); Ada whitepaper (AD104: 48 MB L2), 58 SMs enabled"},
    {"NVIDIA RTX PRO 6000 Blackwell Server Edition", 12, 0, 188, 1536, 128 * kMiB, 1792, 5,
     "NVIDIA RTX PRO 6000 Blackwell datasheet (188 SMs, 1,792 GB/s GDDR7, PCIe Gen5); GB202: 128 MB L2"},
};

DeviceSpec read_device(const json& j, DeviceSpec d) {
  d.name = j.value("name", d.name);
  if (j.contains("compute_capability")) {
    const auto& cc = j.at("compute_capability");
    d.cc_major = cc.at(0).get<int>();
    d.cc_minor = cc.at(1).get<int>();
  }
  if (const KnownGpu* g = known_gpu(d.name)) {  // a description overrides any of these below
    d.cc_major = g->cc_major;
    d.cc_minor = g->cc_minor;
    d.sm_count = g->sm_count;
    d.max_threads_per_sm = g->max_threads_per_sm;
    d.l2_bytes = g->l2_bytes;
  } else {
    d.max_threads_per_sm = max_threads_per_sm_for(d.cc_major, d.cc_minor);
  }
  d.memory_bytes = j.value("memory_bytes", d.memory_bytes);
  d.sm_count = j.value("sm_count", d.sm_count);
  d.max_threads_per_sm = j.value("max_threads_per_sm", d.max_threads_per_sm);
  d.l2_bytes = j.value("l2_bytes", d.l2_bytes);
  d.pci_bus_id = j.value("pci_bus_id", d.pci_bus_id);
  return d;
}

std::vector<std::vector<bool>> read_peer_access(const json& j, std::size_t n) {
  std::vector<std::vector<bool>> m(n, std::vector<bool>(n, false));
  if (!j.is_string()) {  // an explicit matrix of 0/1
    if (j.size() != n) throw std::runtime_error("peer_access: the matrix needs one row per device");
    for (std::size_t a = 0; a < n; ++a) {
      if (j.at(a).size() != n) throw std::runtime_error(fmt::format("peer_access[{}]: needs one entry per device", a));
      for (std::size_t b = 0; b < n; ++b) m[a][b] = a != b && j.at(a).at(b).get<int>() != 0;
    }
    return m;
  }
  auto mode = j.get<std::string>();
  if (mode != "all" && mode != "none") throw std::runtime_error("peer_access: \"all\", \"none\" or a matrix");
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) m[a][b] = mode == "all" && a != b;
  return m;
}

NvmlSpec read_nvml(const json& j) {
  NvmlSpec n;
  n.driver_version = j.value("driver_version", n.driver_version);
  n.nvlinks_per_gpu = j.value("nvlinks_per_gpu", n.nvlinks_per_gpu);
  n.nvlinks_down = j.value("nvlinks_down", n.nvlinks_down);
  n.nvlink_version = j.value("nvlink_version", n.nvlink_version);
  n.nvlink_remote = j.value("nvlink_remote", n.nvlink_remote);
  n.virtualization_mode = j.value("virtualization_mode", n.virtualization_mode);
  n.p2p_off_status = j.value("p2p_off_status", n.p2p_off_status);
  n.bar1_bytes = j.value("bar1_bytes", n.bar1_bytes);
  n.idle_power_w = j.value("idle_power_w", n.idle_power_w);
  n.max_power_w = j.value("max_power_w", n.max_power_w);
  n.sm_clock_mhz = j.value("sm_clock_mhz", n.sm_clock_mhz);
  n.utilization_period_s = j.value("utilization_period_s", n.utilization_period_s);
  n.busy_percent = j.value("busy_percent", n.busy_percent);
  n.gpm = j.value("gpm", n.gpm);
  n.gpm_sm_active = j.value("gpm_sm_active", n.gpm_sm_active);
  n.gpm_sm_occupancy = j.value("gpm_sm_occupancy", n.gpm_sm_occupancy);
  n.gpm_tensor_active = j.value("gpm_tensor_active", n.gpm_tensor_active);
  n.gpm_dram_active = j.value("gpm_dram_active", n.gpm_dram_active);
  if (n.nvlinks_per_gpu < 0 || n.nvlinks_per_gpu > 18) throw std::runtime_error("nvml.nvlinks_per_gpu: 0..18 (NVML_NVLINK_MAX_LINKS)");
  if (n.nvlinks_down < 0 || n.nvlinks_down > n.nvlinks_per_gpu) throw std::runtime_error("nvml.nvlinks_down: 0..nvlinks_per_gpu");
  if (n.nvlink_remote != "nvswitch" && n.nvlink_remote != "gpu") throw std::runtime_error("nvml.nvlink_remote: \"nvswitch\" or \"gpu\"");
  if (!(n.utilization_period_s > 0)) throw std::runtime_error("nvml.utilization_period_s: must be > 0");
  if (n.busy_percent > 100) throw std::runtime_error("nvml.busy_percent: 0..100, or negative for the triangle wave");
  if (n.gpm != "auto" && n.gpm != "unsupported" && n.gpm != "probe_fails")
    throw std::runtime_error("nvml.gpm: \"auto\", \"unsupported\" or \"probe_fails\"");
  for (double f : {n.gpm_sm_active, n.gpm_sm_occupancy, n.gpm_tensor_active, n.gpm_dram_active})
    if (!(f >= 0 && f <= 1)) throw std::runtime_error("nvml.gpm_*: fractions 0..1");
  return n;
}

CublasLtSpec read_cublaslt(const json& j) {
  CublasLtSpec c;
  c.version = j.value("version", c.version);
  c.bf16_tflops = j.value("bf16_tflops", c.bf16_tflops);
  c.f16_tflops = j.value("f16_tflops", c.f16_tflops);
  c.fp8_tflops = j.value("fp8_tflops", c.fp8_tflops);
  c.latency_us = j.value("latency_us", c.latency_us);
  c.algos = j.value("algos", c.algos);
  if (!(c.bf16_tflops > 0) || !(c.f16_tflops > 0) || !(c.fp8_tflops > 0) || c.latency_us < 0)
    throw std::runtime_error("cublaslt: *_tflops must be > 0 and latency_us >= 0");
  if (c.algos < 1 || c.algos > 2) throw std::runtime_error("cublaslt.algos: 1 or 2");
  return c;
}

}  // namespace

const KnownGpu* known_gpu(const std::string& name) {
  for (const auto& g : kKnownGpus)
    if (name == g.name) return &g;
  return nullptr;
}

int max_threads_per_sm_for(int cc_major, int cc_minor) {
  if (cc_major == 7 && cc_minor == 5) return 1024;
  if ((cc_major == 8 && (cc_minor == 6 || cc_minor == 9)) || cc_major == 12) return 1536;
  return 2048;
}

SimConfig default_config() {
  SimConfig c;
  c.description = "default: 2 simulated GPUs, P2P on, no faults";
  DeviceSpec gpu{"Simulated GPU", 9, 0, std::uint64_t{16} << 30, 8};
  c.devices = {gpu, gpu};
  c.devices[0].pci_bus_id = "0000:1b:00.0";
  c.devices[1].pci_bus_id = "0000:1c:00.0";
  c.peer_access = {{false, true}, {true, false}};
  c.l2_gbps = 3 * c.device.gbps;
  return c;
}

SimConfig parse_config(const std::string& json_text, const std::string& origin) {
  try {
    json j = json::parse(json_text);
    SimConfig c;
    c.description = j.value("description", "");
    c.driver_version = j.value("driver_version", c.driver_version);
    DeviceSpec defaults = read_device(j.value("device_defaults", json::object()), DeviceSpec{});
    for (const auto& d : j.at("devices")) c.devices.push_back(read_device(d, defaults));
    for (std::size_t i = 0; i < c.devices.size(); ++i)
      if (c.devices[i].pci_bus_id.empty()) c.devices[i].pci_bus_id = fmt::format("0000:{:02x}:00.0", 0x10 + i);
    c.peer_access = read_peer_access(j.value("peer_access", json("all")), c.devices.size());
    json links = j.value("links", json::object());
    c.host = read_link(links, "host", c.host);
    c.pageable = read_link(links, "pageable", c.pageable);
    c.device = read_link(links, "device", c.device);
    c.peer = read_link(links, "peer", c.peer);
    c.peer_reverse = read_link(links, "peer_reverse", c.peer);
    c.staged = read_link(links, "staged", c.staged);
    c.l2_gbps = j.value("l2_gbps", 3 * c.device.gbps);
    if (!(c.l2_gbps > 0)) throw std::runtime_error("l2_gbps: must be > 0");
    json faults = j.value("faults", json::object());
    c.faults.corrupt_peer_copies = faults.value("corrupt_peer_copies", false);
    c.faults.hang_peer_copies = faults.value("hang_peer_copies", false);
    c.faults.oom = faults.value("oom", false);
    c.faults.ecc_error = faults.value("ecc_error", false);
    c.faults.corrupt_matmul = faults.value("corrupt_matmul", false);
    c.kernel_us = j.value("kernel_us", c.kernel_us);
    if (!(c.kernel_us > 0)) throw std::runtime_error("kernel_us: must be > 0");
    json driver = j.value("driver", json::object());
    c.driver.pageable_copy_lag_ms = driver.value("pageable_copy_lag_ms", 0.0);
    c.driver.synchronous_staged_peer_copies = driver.value("synchronous_staged_peer_copies", false);
    if (!(c.driver.pageable_copy_lag_ms >= 0)) throw std::runtime_error("driver.pageable_copy_lag_ms: must be >= 0");
    c.nvml = read_nvml(j.value("nvml", json::object()));
    c.cublaslt = read_cublaslt(j.value("cublaslt", json::object()));
    return c;
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("simulated CUDA description {}: {}", origin, e.what()));
  }
}

SimConfig config_from_environment() {
  const char* file = std::getenv("INTERPROBE_SIM_CONFIG");
  if (!file || !*file) return default_config();
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("simulated CUDA description {}: cannot open it", file));
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), file);
}

}  // namespace interprobe::sim
