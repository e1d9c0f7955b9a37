#pragma once
// Published GPU, interconnect and serving-engine figures, used only when the operator asks
// (`--assume gpu=NAME[,link=KEY][,engine=KEY][,graphs=on|off][,host_us=N]`) to price what the
// report did not measure. Every price drawn from here is `assumed`, never `measured`, and each
// table row names where its numbers come from.
#include <optional>
#include <string>
#include <string_view>

#include <memory>

#include "report/analysis/bottleneck/report_prices.hpp"
#include "report/analysis/bottleneck/step_pricing.hpp"

namespace interprobe::bottleneck {

struct GpuSpec {
  const char* key;           // what --assume gpu= takes
  const char* name;          // the product
  const char* device_match;  // a substring of the device name a report's GPU engine records
  double memory_gbps;        // device memory, datasheet
  double memory_gb;          // device memory capacity, datasheet (decimal GB)
  double bf16_tflops;        // dense tensor-core peaks, datasheet boost clock
  double fp8_tflops;         // 0: no FP8 tensor cores
  double nvfp4_tflops;       // 0: no FP4 tensor cores
  const char* default_link;  // the interconnect of the usual multi-GPU system (a LinkSpec key)
  const char* basis;         // where the numbers come from
};

// Small-message all-reduce latency and large-message bus bandwidth of an interconnect, as
// published (nccl-tests / engine custom all-reduce figures), for at most 8 GPUs.
struct LinkSpec {
  const char* key;
  const char* name;
  double latency_us;   // a latency-bound all-reduce (<= 64 KiB)
  double busbw_gbps;   // nccl-tests busbw of a large all-reduce
  bool peer_to_peer;   // false: staged through host memory
  const char* basis;
};

// The host side of one decode step: the scheduler, input preparation and sampling that run on
// the CPU between steps (not hidden by overlap), per engine.
struct EngineSpec {
  const char* key;
  double host_step_us;
  const char* basis;
};

const GpuSpec* find_gpu_spec(std::string_view key);
const LinkSpec* find_link_spec(std::string_view key);
const EngineSpec* find_engine_spec(std::string_view key);
std::string known_gpu_specs();  // "h100-sxm, h200, ..." for error messages
std::string known_link_specs();
std::string known_engine_specs();

// What --assume chose, resolved against the tables; throws InputError naming the bad part.
struct AssumedTarget {
  const GpuSpec* gpu = nullptr;
  const LinkSpec* link = nullptr;
  const EngineSpec* engine = nullptr;
  bool cuda_graphs = true;               // vLLM and SGLang decode under CUDA graphs by default
  std::optional<double> host_step_us;    // overrides the engine's
  std::string describe() const;          // one line for the report's sources
};
AssumedTarget parse_assume(const std::string& text);

// The efficiencies a decode step reaches on a GPU nobody measured here (each assumed; see .cpp).
struct DecodeEfficiency {
  double memory = 0;       // achieved / datasheet bandwidth for streamed weights and KV
  double grouped_gemm_us = 0;  // fixed cost of one grouped expert GEMM launch, however many experts it runs
  double compute = 0;      // achieved / peak tensor throughput for compute-bound GEMMs
  double kernel_graph_us = 0;  // fixed cost per kernel replayed from a CUDA graph
  double kernel_eager_us = 0;  // host cost per kernel of an eager (PyTorch) engine: dispatch + launch
};
const DecodeEfficiency& assumed_efficiency();

// Prices what `measured` cannot (or everything, when `measured` is of another device) from an
// AssumedTarget, marked assumed.
class AssumedPrices : public PriceSource {
 public:
  // Which of the report's own numbers come first: its GEMMs, memory and launches when a GPU engine
  // measured this very GPU; its all-reduces when it measured GPUs of this kind.
  struct UseMeasured {
    bool compute = false;
    bool collectives = false;
  };
  AssumedPrices(const PriceSource& measured, AssumedTarget target, UseMeasured use)
      : measured_(measured), target_(std::move(target)), use_(use) {}

  std::optional<Price> gemm(const workload::GemmOp& op) const override;
  std::optional<double> ridge_flop_per_byte(workload::WeightDtype dtype) const override;
  std::optional<Price> all_reduce(std::int64_t bytes, std::int64_t ranks) const override;
  std::optional<double> all_reduce_floor_us(std::int64_t ranks) const override;
  std::optional<Price> stream_read(double bytes) const override;
  std::optional<Price> launches(std::int64_t kernels) const override;

 private:
  double peak_tflops(workload::WeightDtype dtype) const;
  double achieved_gbps() const;
  const PriceSource& measured_;
  AssumedTarget target_;
  UseMeasured use_;
};

// The prices of `--assume TEXT` over the report's own: the report's GEMMs, memory and launches
// first when a GPU engine measured that very GPU, its all-reduces when it measured GPUs of that kind.
std::unique_ptr<AssumedPrices> assumed_prices(const ReportPrices& measured, const std::string& assume_text);

}  // namespace interprobe::bottleneck
