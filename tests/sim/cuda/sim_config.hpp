#pragma once
// The machine the simulated libcuda pretends to be, read from a JSON description
// (INTERPROBE_SIM_CONFIG=file.json; tests/sim/devices/*.json; format in tests/sim/README.md).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace interprobe::sim {

// A link's cost model: a copy of B bytes takes latency_us + B / (gbps * 1e9) seconds.
struct LinkModel {
  double gbps = 10;
  double latency_us = 2;
  double seconds_for(std::uint64_t bytes) const { return latency_us * 1e-6 + static_cast<double>(bytes) / (gbps * 1e9); }
};

struct DeviceSpec {
  std::string name = "Simulated GPU";
  int cc_major = 9, cc_minor = 0;
  std::uint64_t memory_bytes = std::uint64_t{16} << 30;
  int sm_count = 8;
  // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR and _L2_CACHE_SIZE: from the table of real
  // GPUs (known_gpu) by name, else by compute capability; a description may set either.
  int max_threads_per_sm = 2048;
  std::uint64_t l2_bytes = std::uint64_t{50} << 20;
  std::string pci_bus_id;  // "0000:1b:00.0"
};

// A real GPU's properties, each from the source named in sim_config.cpp.
struct KnownGpu {
  const char* name;  // what cuDeviceGetName returns for it
  int cc_major, cc_minor;
  int sm_count;
  int max_threads_per_sm;
  std::uint64_t l2_bytes;
  double hbm_gbps;  // memory bandwidth, GB/s
  int pcie_gen;
  const char* source;
};
// The table entry whose name is exactly `name`; nullptr when none.
const KnownGpu* known_gpu(const std::string& name);
// Resident threads per SM by compute capability (CUDA C++ Programming Guide, "Technical
// Specifications per Compute Capability": 1024 for 7.5, 1536 for 8.6/8.9/12.x, else 2048).
int max_threads_per_sm_for(int cc_major, int cc_minor);

struct Faults {
  bool corrupt_peer_copies = false;  // direct peer copies (and peer SM kernels) deliver wrong bytes
  bool hang_peer_copies = false;     // direct peer copies never complete
  bool oom = false;                  // every cuMemAlloc fails with CUDA_ERROR_OUT_OF_MEMORY
  bool ecc_error = false;            // after the first copy, waits report CUDA_ERROR_ECC_UNCORRECTABLE
  bool corrupt_matmul = false;       // libcublasLt: every output of cublasLtMatmul is off by K/4
};

// What the simulated libcublasLt.so adds (the description's "cublaslt" object). A matmul of
// M x N x K takes latency_us + max(2MNK / tflops, bytes of A, B, C and D / links.device.gbps) on
// the stream's device clock.
struct CublasLtSpec {
  std::size_t version = 120805;  // cublasLtGetVersion: 12.8.5
  double bf16_tflops = 100, f16_tflops = 100, fp8_tflops = 200;
  double latency_us = 4;
  int algos = 2;                 // how many algorithms the heuristic offers (1 or 2)
};

// How the driver orders work that real drivers are allowed to reorder (the description's "driver"
// object); both off by default.
struct DriverBehavior {
  // cuMemcpyHtoD from pageable memory returns once the bytes are staged; they land this much later,
  // ordered only with the legacy stream (a non-blocking stream does not wait for them).
  double pageable_copy_lag_ms = 0;
  // cuMemcpyPeerAsync without peer access stages synchronously: the call returns only when the
  // copy is done, so it waits for everything queued before it on the stream.
  bool synchronous_staged_peer_copies = false;
};

// What the simulated libnvidia-ml.so.1 adds to the devices (the description's "nvml" object).
struct NvmlSpec {
  std::string driver_version = "550.54.15";  // nvmlSystemGetDriverVersion
  int nvlinks_per_gpu = 0;                   // 0: no NVLink (nvmlDeviceGetNvLinkState fails on link 0)
  int nvlinks_down = 0;                      // the last this many links are present but not active
  unsigned nvlink_version = 7;               // nvmlNvlinkVersion_t (7 = 5.0: what Hopper reports)
  std::string nvlink_remote = "nvswitch";    // "nvswitch" or "gpu" (links dealt round-robin to peers)
  int virtualization_mode = 0;               // nvmlGpuVirtualizationMode_t: 0 none, 1 passthrough, 2 vgpu
  int p2p_off_status = 1;                    // nvmlGpuP2PStatus_t of a pair without peer access (1 chipset)
  std::uint64_t bar1_bytes = std::uint64_t{256} << 20;
  double idle_power_w = 70, max_power_w = 700;  // power follows utilization
  unsigned sm_clock_mhz = 1980;
  double utilization_period_s = 10;          // utilization: a triangle wave 0..100 % with this period
  double busy_percent = -1;                  // 0..100: a constant utilization instead of the wave
  // GPM (nvmlGpm*): "auto" supported on compute capability >= 9 outside a vGPU, "unsupported"
  // (nvmlGpmQueryDeviceSupport says no), "probe_fails" (supported, but nvmlGpmSampleGet fails).
  std::string gpm = "auto";
  // GPM activity at 100 % utilization (fractions), scaled by the utilization of the sampled span.
  double gpm_sm_active = 0.3, gpm_sm_occupancy = 0.2, gpm_tensor_active = 0.05, gpm_dram_active = 0.2;
};

struct SimConfig {
  std::string description;
  int driver_version = 12040;
  std::vector<DeviceSpec> devices;
  std::vector<std::vector<bool>> peer_access;  // [a][b]: cuDeviceCanAccessPeer(a, b)
  LinkModel host{25, 2};     // pinned host <-> device, each direction
  LinkModel pageable{8, 5};  // pageable host memory (staged by the driver)
  LinkModel device{1000, 2}; // device-local copies, fills, checks
  LinkModel peer{50, 2};     // direct peer copies (peer access on)
  LinkModel peer_reverse{50, 2};  // direct peer copies from a higher to a lower device (default: = peer)
  LinkModel staged{10, 12};  // peer copies with peer access off (the driver stages them)
  // Reads the L2 serves (the simulated cuBLASLt: an operand still in the device's L2 from an earlier
  // GEMM); 0 = three times links.device.gbps (an assumption of the simulator, not a datasheet value).
  double l2_gbps = 0;
  double kernel_us = 2.5;    // an empty kernel (launch floor kernels) on the device clock
  Faults faults;
  DriverBehavior driver;
  NvmlSpec nvml;
  CublasLtSpec cublaslt;
};

// The documented default (two GPUs with working P2P) when no description is given.
SimConfig default_config();
// Throws std::runtime_error naming the file and the field.
SimConfig parse_config(const std::string& json_text, const std::string& origin);
// INTERPROBE_SIM_CONFIG's file, or the default.
SimConfig config_from_environment();

}  // namespace interprobe::sim
