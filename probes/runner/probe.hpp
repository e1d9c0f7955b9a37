#pragma once
// A probe measures one concern and fills its section of the report. It never formats text.
#include <string>

#include "model/report.hpp"

namespace interprobe {

class HostRoot;
class CpuidSource;
class Progress;
class MeasurementWindows;

struct ProbeContext {
  const HostRoot& root;
  const CpuidSource& cpuid;
  Progress& progress;
  // Telemetry beside GPU measurements (measurement_windows.hpp); null where nothing samples.
  MeasurementWindows* windows = nullptr;
};

class Probe {
 public:
  virtual ~Probe() = default;
  virtual std::string name() const = 0;
  // Writes into `report` as it goes so that what was measured survives a failure or Ctrl-C.
  // Throws UnsupportedError when it cannot run here, InterruptedError on Ctrl-C.
  virtual void run(const ProbeContext& ctx, report::Report& report) = 0;
};

}  // namespace interprobe
