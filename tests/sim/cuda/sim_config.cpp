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

DeviceSpec read_device(const json& j, DeviceSpec d) {
  d.name = j.value("name", d.name);
  if (j.contains("compute_capability")) {
    const auto& cc = j.at("compute_capability");
    d.cc_major = cc.at(0).get<int>();
    d.cc_minor = cc.at(1).get<int>();
  }
  d.memory_bytes = j.value("memory_bytes", d.memory_bytes);
  d.sm_count = j.value("sm_count", d.sm_count);
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

SimConfig default_config() {
  SimConfig c;
  c.description = "default: 2 simulated GPUs, P2P on, no faults";
  c.devices = {DeviceSpec{"Simulated GPU", 9, 0, std::uint64_t{16} << 30, 8, "0000:1b:00.0"},
               DeviceSpec{"Simulated GPU", 9, 0, std::uint64_t{16} << 30, 8, "0000:1c:00.0"}};
  c.peer_access = {{false, true}, {true, false}};
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
    c.staged = read_link(links, "staged", c.staged);
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
