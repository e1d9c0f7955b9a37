// Hugging Face config.json files (`--model`): any bytes parse or throw InputError naming the key;
// a config that parsed prices a decode step at several TP sizes and batches without overflow.
#include <cmath>
#include <string>

#include "common/errors.hpp"
#include "report/analysis/workload/decode_step.hpp"
#include "report/analysis/workload/model_config.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace interprobe;
  const std::string text(reinterpret_cast<const char*>(data), size);
  workload::ModelConfig model;
  try {
    model = workload::parse_model_config(text, "config.json");
  } catch (const InputError&) {
    return 0;
  }
  for (std::int64_t tp : {1, 2, 8})
    for (std::int64_t batch : {1, 64}) {
      workload::StepParams p;
      p.tp = tp;
      p.batch = batch;
      try {
        auto step = workload::decode_step(model, p);
        fuzz::fuzz_require(std::isfinite(step.weight_bytes()) && step.weight_bytes() > 0,
                           "a step reads a finite, positive number of weight bytes");
        fuzz::fuzz_require(std::isfinite(step.flops()) && step.cache_bytes() >= 0, "flops and cache bytes are sane");
        for (const auto& c : step.collectives) fuzz::fuzz_require(c.bytes > 0, "collective messages are not empty");
      } catch (const InputError&) {
      }
    }
  return 0;
}
