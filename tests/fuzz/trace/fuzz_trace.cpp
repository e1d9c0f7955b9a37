// Telemetry traces (`observe --replay`): any bytes parse or throw InputError naming the field;
// a trace that parsed classifies into finite fractions, one window list per GPU.
#include <cmath>
#include <string>

#include "common/errors.hpp"
#include "probes/telemetry/classify.hpp"
#include "probes/telemetry/trace.hpp"
#include "tests/fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace interprobe;
  const std::string text(reinterpret_cast<const char*>(data), size);
  telemetry::Trace trace;
  try {
    trace = telemetry::parse_trace(text, "trace.json");
  } catch (const InputError&) {
    return 0;
  }
  auto section = telemetry::classify_trace(trace, telemetry::ClassifyOptions{});
  fuzz::fuzz_require(section.gpus.size() == trace.gpus.size(), "one classified entry per GPU of the trace");
  return 0;
}
