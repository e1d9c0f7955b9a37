#pragma once
// What the simulated NVML's two files share: the device handle and the time-driven counters
// (sim_nvml.cpp), read by the GPM entry points (sim_nvml_gpm.cpp).
#include "sim_config.hpp"

namespace interprobe::sim::nvml {

struct Device {  // what an nvmlDevice_t points at
  int index = 0;
};

// The device's description; null for a handle that is not one, or before nvmlInit.
const DeviceSpec* device_spec(Device* d);
const NvmlSpec& nvml_spec();
double now_s();             // since the library was loaded
double busy_seconds_now();  // the integral of utilization / 100 since then

}  // namespace interprobe::sim::nvml
