#pragma once
// The simulated libcuda (tests/sim/cuda) loaded in this process through our loader, with a
// description chosen per test (interprobe_sim_load).
#include <dlfcn.h>

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "probes/gpu/cuda_driver.hpp"

namespace interprobe::testing {

inline std::string sim_device_file(const std::string& name) { return std::string(INTERPROBE_SIM_DEVICES) + "/" + name; }

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Replaces the simulator's description (it is the same library whatever path loads it).
inline void sim_load(const std::string& json_text) {
  void* handle = dlopen(INTERPROBE_SIM_CUDA, RTLD_NOW | RTLD_NOLOAD);
  if (!handle) handle = dlopen(INTERPROBE_SIM_CUDA, RTLD_NOW);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto load = reinterpret_cast<int (*)(const char*)>(dlsym(handle, "interprobe_sim_load"));
  ASSERT_NE(load, nullptr);
  ASSERT_EQ(load(json_text.c_str()), 0) << json_text;
}

}  // namespace interprobe::testing
