#pragma once
// GPM activity (Hopper and newer) for the NVML sampler: whether each GPU gives it (virtualization
// mode, then nvmlGpmQueryDeviceSupport, then a live two-sample probe; docs/reference.md §11) and, per
// tick, SM active, SM occupancy, tensor active and DRAM bandwidth utilization since that GPU's
// previous GPM sample. Reads only.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/dynlib.hpp"
#include "probes/telemetry/trace.hpp"
#include "probes/topology/nvml_api.hpp"

namespace interprobe::telemetry {

inline constexpr double kGpmMinSpanS = 0.1;  // two GPM samples at least this far apart

class GpmReader {
 public:
  GpmReader(const DynamicLibrary& nvml, nvml::ErrorStringFn* error_string);
  ~GpmReader();  // frees the GPM samples: destroy before nvmlShutdown
  GpmReader(const GpmReader&) = delete;
  GpmReader& operator=(const GpmReader&) = delete;

  // Per device, in order: null when GPM works on it, else why not. Waits kGpmMinSpanS once for
  // all devices (the live probe's two samples).
  std::vector<std::optional<std::string>> probe(const std::vector<nvml::Device>& devices);
  // Fills s's GPM fields with the activity since device `gpu`'s previous GPM sample when that is at
  // least kGpmMinSpanS old (else leaves them null). Returns the NVML code of a failed call.
  nvml::Return read(std::size_t gpu, TraceSample& s);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace interprobe::telemetry
