#include "report/analysis/bottleneck/assumed_specs.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/text.hpp"

namespace interprobe::bottleneck {

namespace {

// Dense peaks (no sparsity). Where a datasheet gives only the sparse figure it is halved, and
// the basis says so.
constexpr std::array<GpuSpec, 8> kSpecs{{
    {"h100-sxm", "NVIDIA H100 SXM5 80GB", "H100", 3350, 80, 989.4, 1978.9, 0, "nvswitch-h100",
     "NVIDIA H100 datasheet (SXM5)"},
    {"h200", "NVIDIA H200 SXM 141GB", "H200", 4800, 141, 989.4, 1978.9, 0, "nvswitch-h100", "NVIDIA H200 datasheet"},
    {"b200", "NVIDIA B200", "B200", 8000, 180, 2250, 4500, 9000, "nvswitch-b200", "NVIDIA B200 datasheet (HGX B200, per GPU)"},
    {"a100-sxm", "NVIDIA A100 SXM4 80GB", "A100-SXM4-80GB", 2039, 80, 312, 0, 0, "nvswitch-a100",
     "NVIDIA A100 datasheet (80GB SXM)"},
    {"a100-40gb", "NVIDIA A100 SXM4 40GB", "A100-SXM4-40GB", 1555, 40, 312, 0, 0, "nvswitch-a100",
     "NVIDIA A100 datasheet (40GB SXM: 1,555 GB/s)"},
    {"l40s", "NVIDIA L40S", "L40S", 864, 48, 362.05, 733, 0, "pcie-p2p", "NVIDIA L40S datasheet"},
    {"l4", "NVIDIA L4", "L4", 300, 24, 121, 242.5, 0, "pcie-no-p2p", "NVIDIA L4 datasheet"},
    {"rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell (96 GB GDDR7)", "RTX PRO 6000", 1792, 96, 500, 1000, 2000, "pcie-p2p",
     "NVIDIA RTX PRO 6000 Blackwell datasheet: 1,792 GB/s; 4,000 FP4 TOPS with sparsity, halved for dense, FP8 and BF16 "
     "at 1/2 and 1/4 of it"},
}};

// Published all-reduce figures per interconnect (docs/reference.md §6 and §9 list the sources).
constexpr std::array<LinkSpec, 5> kLinks{{
    {"nvswitch-h100", "NVLink 4 through NVSwitch (H100/H200 HGX)", 8, 365, true,
     "nccl-tests busbw 363-370 GB/s (ring) on 8x H100/H200; small all-reduce latency: one-shot custom all-reduce over "
     "NVLink P2P (1.8-2.3 us per hop), assumed 8 us"},
    {"nvswitch-b200", "NVLink 5 through NVSwitch (HGX B200)", 8, 682, true,
     "nccl-tests busbw 682 GB/s (ring) on 8x B200; small all-reduce latency assumed as for NVLink 4"},
    {"nvswitch-a100", "NVLink 3 through NVSwitch (HGX A100)", 10, 235, true,
     "nccl-tests busbw 235 GB/s on 8x A100; small all-reduce latency assumed 10 us"},
    {"pcie-p2p", "PCIe Gen5 with GPU peer-to-peer", 24, 39, true,
     "community nccl-tests on 8x RTX PRO 6000 bare metal: 256 B-64 KiB all-reduce about 24 us, large busbw 37-41 GB/s"},
    {"pcie-no-p2p", "PCIe without peer-to-peer (staged through host memory: VMs without the P2P clique, consumer GPUs)",
     42, 25, false,
     "nccl-tests 8-byte all-reduce 40-43 us on 8x RTX 4090 (no P2P); busbw 24.6 GB/s on 6x RTX 4090 PCIe Gen4"},
}};

constexpr std::array<EngineSpec, 3> kEngines{{
    {"vllm", 400,
     "assumed: vLLM V1's scheduler, input preparation and sampling on the host each step (the vLLM v0.6.0 "
     "performance post found host-side work a large share of an 8B decode step on H100)"},
    {"sglang", 200, "assumed: SGLang's overlap scheduler runs the next batch's host work during the current step"},
    {"trtllm", 150, "assumed: TensorRT-LLM's C++ executor (NVIDIA NIM's default backend)"},
}};

// reference: 70-90% of datasheet bandwidth for large streaming reads; skinny GEMMs at decode
// sizes grade against memory. A grouped expert GEMM (vLLM's and SGLang's fused_moe: every touched
// expert of a layer in one launch) reads its experts' weights at that bandwidth and pays a fixed
// cost per launch, whatever the number of experts: vLLM's benchmark_moe on one H100 (PR 24700,
// Qwen3-30B-A3B, per-tensor fp8_w8a8, tuned configs) times the whole expert block at 40.4, 118.6
// and 237.3 us for 1, 8 and 64 tokens, which is 8, 51.6 and 125.9 experts' bytes (4.72 MB each)
// at 80% of 3,350 GB/s (14, 91 and 222 us) plus about 26, 28 and 16 us; that block is two grouped
// GEMMs and three small kernels (align, activation, sum, priced at 2 us each below), so 10 us per
// grouped GEMM. ~80% of dense peak at large GEMMs (790 of 989 TFLOP/s bf16 on H100), less for decode
// shapes; a kernel replayed from a CUDA graph still costs its launch on the device and its ramp
// (about 2 us, assumed). An eager engine pays, per kernel, the framework's dispatch on the host as
// well as the launch: PyTorch's Python -> pybind11 -> dispatcher -> backend -> cudaLaunchKernel
// path costs about 5-25 us of CPU per op (J. Lin, "From PyTorch op to kernel launch", GPU kernel
// serving lesson 18); 10 us assumed, and on 8 SM120 GPUs SGLang measured a 2.4x slower decode step
// eager than under graphs (sgl-project/sglang PR 24047: 240 vs 97.5 ms per token for
// DeepSeek-V4-Flash at batch 1).
constexpr DecodeEfficiency kEfficiency{0.80, 10.0, 0.7, 2.0, 10.0};

template <typename Table>
auto find_in(const Table& table, std::string_view key) -> decltype(&table[0]) {
  for (const auto& row : table)
    if (key == row.key) return &row;
  return nullptr;
}

template <typename Table>
std::string keys_of(const Table& table) {
  std::string out;
  for (const auto& row : table) out += (out.empty() ? "" : ", ") + std::string(row.key);
  return out;
}

}  // namespace

const GpuSpec* find_gpu_spec(std::string_view key) { return find_in(kSpecs, key); }
const LinkSpec* find_link_spec(std::string_view key) { return find_in(kLinks, key); }
const EngineSpec* find_engine_spec(std::string_view key) { return find_in(kEngines, key); }
std::string known_gpu_specs() { return keys_of(kSpecs); }
std::string known_link_specs() { return keys_of(kLinks); }
std::string known_engine_specs() { return keys_of(kEngines); }
const DecodeEfficiency& assumed_efficiency() { return kEfficiency; }

AssumedTarget parse_assume(const std::string& text) {
  AssumedTarget t;
  for (const auto& item : split(text, ',')) {
    std::string part(trim(item));
    auto eq = part.find('=');
    std::string key = part.substr(0, eq), value = eq == std::string::npos ? "" : part.substr(eq + 1);
    auto bad = [&](const std::string& known) {
      return InputError(fmt::format("--assume '{}': {}='{}' is not known; give {}", text, key, value, known));
    };
    if (key == "gpu") {
      if (!(t.gpu = find_gpu_spec(value))) throw bad(known_gpu_specs());
    } else if (key == "link") {
      if (!(t.link = find_link_spec(value))) throw bad(known_link_specs());
    } else if (key == "engine") {
      if (!(t.engine = find_engine_spec(value))) throw bad(known_engine_specs());
    } else if (key == "graphs") {
      if (value != "on" && value != "off") throw bad("on or off");
      t.cuda_graphs = value == "on";
    } else if (key == "host_us") {
      std::size_t used = 0;
      double v = -1;
      try {
        v = std::stod(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != value.size() || !(v >= 0) || v > 1e6) throw bad("a host cost per step in us, 0 to 1e6");
      t.host_step_us = v;
    } else {
      throw InputError(fmt::format("--assume '{}': '{}' is not a key; give gpu=NAME[,link=KEY][,engine=KEY]"
                                   "[,graphs=on|off][,host_us=N]",
                                   text, part));
    }
  }
  if (!t.gpu) throw InputError(fmt::format("--assume '{}': give gpu=NAME ({})", text, known_gpu_specs()));
  if (!t.link) t.link = find_link_spec(t.gpu->default_link);
  if (!t.engine) t.engine = find_engine_spec("vllm");
  return t;
}

std::string AssumedTarget::describe() const {
  return fmt::format("{} ({:.0f} GB/s datasheet, {:.0f}% achieved assumed; {}); grouped expert GEMMs {:.0f} us a launch "
                     "beside their bytes, quantized experts read as 2 bytes a weight (vLLM benchmark_moe and block-FP8 "
                     "GEMM timings, assumed); interconnect {} ({:.0f} us small "
                     "all-reduce, {:.0f} GB/s busbw; {}); engine {} ({:.0f} us host per step{}; {}); {}",
                     gpu->name, gpu->memory_gbps, 100 * kEfficiency.memory, gpu->basis, kEfficiency.grouped_gemm_us,
                     link->name, link->latency_us,
                     link->busbw_gbps, link->basis, engine->key, host_step_us.value_or(engine->host_step_us),
                     host_step_us ? ", given" : "", engine->basis,
                     cuda_graphs ? fmt::format("CUDA graphs on ({:.1f} us per kernel, assumed)", kEfficiency.kernel_graph_us)
                                 : fmt::format("eager (graphs off: {:.1f} us per kernel for the framework's dispatch and the "
                                               "launch on the host, assumed)",
                                               kEfficiency.kernel_eager_us));
}

double AssumedPrices::peak_tflops(workload::WeightDtype dtype) const {
  const GpuSpec& spec = *target_.gpu;
  // A dtype without its own tensor cores runs at the next wider one's rate.
  switch (dtype) {
    case workload::WeightDtype::nvfp4:
      if (spec.nvfp4_tflops > 0) return spec.nvfp4_tflops;
      [[fallthrough]];
    case workload::WeightDtype::fp8:
      if (spec.fp8_tflops > 0) return spec.fp8_tflops;
      [[fallthrough]];
    case workload::WeightDtype::bf16: return spec.bf16_tflops;
  }
  return spec.bf16_tflops;
}

double AssumedPrices::achieved_gbps() const { return target_.gpu->memory_gbps * kEfficiency.memory; }

std::optional<Price> AssumedPrices::gemm(const workload::GemmOp& op) const {
  if (use_.compute)
    if (auto p = measured_.gemm(op)) return p;
  // One instance: its weights, its bf16 activations in and out. A grouped expert GEMM adds its
  // launch's fixed cost, spread over the experts that launch runs; quantized experts (every MoE
  // checkpoint we model scales them in blocks: DeepSeek's and Qwen3's FP8 per 128x128, NVFP4 per
  // 16) dequantize tile by tile at decode sizes and run no faster than bf16 ones (ML.ENERGY's
  // Qwen3-235B-A22B: FP8 slower than BF16 on the same 8 H100s; vLLM PR 23280 on an H100, DeepSeek-V3's
  // N=2112 K=7168 at batch 1: block FP8 23 us in Triton, 34 in CUTLASS, BF16 10): priced at 2 bytes.
  const bool grouped = op.grouped_experts();
  const double weight_bytes = grouped ? std::max(2.0, workload::bytes_per_weight(op.dtype))
                                      : workload::bytes_per_weight(op.dtype);
  double bytes = static_cast<double>(op.n) * static_cast<double>(op.k) * weight_bytes +
                 2.0 * static_cast<double>(op.m) * static_cast<double>(op.k + op.n);
  double launch_share_us = grouped && op.count > 0 ? kEfficiency.grouped_gemm_us * op.kernels / op.count : 0;
  double flops = 2.0 * static_cast<double>(op.m) * static_cast<double>(op.n) * static_cast<double>(op.k);
  double us = std::max(bytes / (achieved_gbps() * 1e9), flops / (peak_tflops(op.dtype) * kEfficiency.compute * 1e12)) * 1e6 +
              launch_share_us;
  return Price{us, Provenance::assumed};
}

std::optional<double> AssumedPrices::ridge_flop_per_byte(workload::WeightDtype dtype) const {
  if (use_.compute)
    if (auto r = measured_.ridge_flop_per_byte(dtype)) return r;
  return peak_tflops(dtype) * kEfficiency.compute * 1e12 / (achieved_gbps() * 1e9);
}

std::optional<Price> AssumedPrices::all_reduce(std::int64_t bytes, std::int64_t ranks) const {
  if (use_.collectives)
    if (auto p = measured_.all_reduce(bytes, ranks)) return p;
  if (ranks < 2) return Price{0, Provenance::assumed};
  double bus_bytes = 2.0 * static_cast<double>(ranks - 1) / static_cast<double>(ranks) * static_cast<double>(bytes);
  return Price{target_.link->latency_us + bus_bytes / (target_.link->busbw_gbps * 1e9) * 1e6, Provenance::assumed};
}

std::optional<double> AssumedPrices::all_reduce_floor_us(std::int64_t ranks) const {
  if (use_.collectives)
    if (auto f = measured_.all_reduce_floor_us(ranks)) return f;
  return ranks < 2 ? 0 : target_.link->latency_us;
}

std::optional<Price> AssumedPrices::stream_read(double bytes) const {
  if (use_.compute)
    if (auto p = measured_.stream_read(bytes)) return p;
  return Price{bytes / (achieved_gbps() * 1e9) * 1e6, Provenance::assumed};
}

std::optional<Price> AssumedPrices::launches(std::int64_t kernels) const {
  double host_us = target_.host_step_us.value_or(target_.engine->host_step_us);
  if (use_.compute)
    if (auto p = measured_.launches(kernels)) return Price{p->us + host_us, worst(p->provenance, Provenance::assumed)};
  double per_kernel_us = target_.cuda_graphs ? kEfficiency.kernel_graph_us : kEfficiency.kernel_eager_us;
  return Price{per_kernel_us * static_cast<double>(kernels) + host_us, Provenance::assumed};
}

std::unique_ptr<AssumedPrices> assumed_prices(const ReportPrices& measured, const std::string& assume_text) {
  AssumedTarget target = parse_assume(assume_text);
  AssumedPrices::UseMeasured use{measured.compute_measured_on(target.gpu->device_match),
                                 measured.gpus_are(target.gpu->device_match)};
  return std::make_unique<AssumedPrices>(measured, std::move(target), use);
}

}  // namespace interprobe::bottleneck
