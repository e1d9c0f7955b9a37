// The driver loader against the simulated libcuda: entry points through cuGetProcAddress, the
// version policy, the simulator marker, and a missing library.
#include <gtest/gtest.h>

#include "common/errors.hpp"
#include "probes/gpu/cuda_driver.hpp"
#include "sim_fixture.hpp"

namespace {

using namespace interprobe;
using interprobe::testing::read_text;
using interprobe::testing::sim_device_file;
using interprobe::testing::sim_load;

std::string unsupported_reason(const std::string& path) {
  try {
    cu::load_driver(path);
  } catch (const UnsupportedError& e) {
    return e.what();
  }
  return "";
}

TEST(CudaDriver, LoadsTheSimulatorThroughCuGetProcAddressAndSaysSimulated) {
  sim_load(read_text(sim_device_file("h100-sxm-8x-nvswitch.json")));
  cu::Driver d = cu::load_driver(INTERPROBE_SIM_CUDA);
  EXPECT_EQ(d.version, 12040);
  EXPECT_EQ(d.resolved_by, "cuGetProcAddress_v2");
  ASSERT_TRUE(d.simulated);
  EXPECT_NE(d.simulated->find("interprobe-sim"), std::string::npos);
  int count = 0;
  ASSERT_EQ(d.device_get_count(&count), cu::kSuccess);
  EXPECT_EQ(count, 8);
  char name[128] = {};
  ASSERT_EQ(d.device_get_name(name, sizeof name, 3), cu::kSuccess);
  EXPECT_STREQ(name, "NVIDIA H100 80GB HBM3");
  char bus[32] = {};
  ASSERT_EQ(d.device_get_pci_bus_id(bus, sizeof bus, 1), cu::kSuccess);
  EXPECT_STREQ(bus, "0000:2A:00.0");
  int major = 0;
  ASSERT_EQ(d.device_get_attribute(&major, cu::kAttrComputeCapabilityMajor, 0), cu::kSuccess);
  EXPECT_EQ(major, 9);
  std::size_t total = 0;
  ASSERT_EQ(d.device_total_mem(&total, 7), cu::kSuccess);
  EXPECT_EQ(total, 85520809984u);
  cu::Context ctx = nullptr;
  ASSERT_EQ(d.primary_ctx_retain(&ctx, 2), cu::kSuccess);
  EXPECT_NE(ctx, nullptr);
  EXPECT_EQ(d.primary_ctx_release(2), cu::kSuccess);
  EXPECT_NE(d.describe(cu::kErrorOutOfMemory).find("CUDA_ERROR_OUT_OF_MEMORY (2)"), std::string::npos);
}

TEST(CudaDriver, RunsOnACuda12_0Driver) {
  sim_load(R"({"driver_version": 12000, "devices": [{}]})");
  EXPECT_EQ(cu::load_driver(INTERPROBE_SIM_CUDA).version, 12000);
}

TEST(CudaDriver, ADriverOlderThanCuda12_0IsUnsupportedNamingBothVersions) {
  sim_load(read_text(sim_device_file("driver-cuda-11.8-too-old.json")));
  auto reason = unsupported_reason(INTERPROBE_SIM_CUDA);
  EXPECT_NE(reason.find("CUDA 11.8"), std::string::npos) << reason;
  EXPECT_NE(reason.find("11080"), std::string::npos) << reason;
  EXPECT_NE(reason.find("CUDA 12.0 (driver r525)"), std::string::npos) << reason;
}

TEST(CudaDriver, NoDeviceIsUnsupportedWithCuInitsReason) {
  sim_load(R"({"driver_version": 12040, "devices": []})");
  auto reason = unsupported_reason(INTERPROBE_SIM_CUDA);
  EXPECT_NE(reason.find("cuInit"), std::string::npos) << reason;
  EXPECT_NE(reason.find("CUDA_ERROR_NO_DEVICE"), std::string::npos) << reason;
}

TEST(CudaDriver, AMissingOrForeignLibraryIsUnsupportedNotACrash) {
  EXPECT_NE(unsupported_reason("/nonexistent/libcuda.so.1").find("cannot load the CUDA driver"), std::string::npos);
  // A shared library that is no CUDA driver: libc has no cuDriverGetVersion.
  EXPECT_NE(unsupported_reason("libc.so.6").find("not a CUDA driver library"), std::string::npos);
}

TEST(CudaDriver, VersionText) {
  EXPECT_EQ(cu::cuda_version_text(12020), "12.2");
  EXPECT_EQ(cu::cuda_version_text(11080), "11.8");
  EXPECT_EQ(cu::minimum_driver_text(), "CUDA 12.0 (driver r525)");
}

}  // namespace
