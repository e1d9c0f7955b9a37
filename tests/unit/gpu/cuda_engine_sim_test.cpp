// The CUDA copy engine in this process against the simulated libcuda: a peer copy that never
// completes makes the batch fail with the reason after the completion timeout, not hang.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "common/dynlib.hpp"
#include "common/host_root.hpp"
#include "probes/bandwidth/cuda_engine.hpp"
#include "probes/bandwidth/host_memory.hpp"
#include "sim_fixture.hpp"

namespace {

using namespace interprobe;

TEST(CudaEngineSimulated, AHungPeerCopyFailsTheBatchAfterTheTimeout) {
  interprobe::testing::sim_load(R"({"devices": [{}, {}], "peer_access": "all", "faults": {"hang_peer_copies": true}})");
  set_library_override(VendorLibrary::cuda_driver, INTERPROBE_SIM_CUDA);
  CudaPlan plan;
  plan.completion_timeout_s = 0.3;
  HostRoot root;
  CudaPaths paths = make_cuda_paths(plan, NumaPlacement::detect(), root);
  auto it = std::find_if(paths.engines.begin(), paths.engines.end(),
                         [](const auto& e) { return e->describe().kind == interprobe::report::CopyKind::p2p_write_ce; });
  ASSERT_NE(it, paths.engines.end());
  CopyEngine& engine = **it;
  engine.reserve(1 << 16);
  engine.prepare(1 << 16);
  auto started = std::chrono::steady_clock::now();
  try {
    engine.copy_us(2);
    ADD_FAILURE() << "a hung copy returned a time";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("did not complete within"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 5.0);
  engine.release();
  // The host-to-device path of the same machine is not affected.
  auto h2d = std::find_if(paths.engines.begin(), paths.engines.end(),
                          [](const auto& e) { return e->describe().kind == interprobe::report::CopyKind::h2d; });
  ASSERT_NE(h2d, paths.engines.end());
  (*h2d)->reserve(1 << 16);
  (*h2d)->prepare(1 << 16);
  EXPECT_GT((*h2d)->copy_us(2), 0);
  EXPECT_TRUE((*h2d)->verify());
  (*h2d)->release();
}

}  // namespace
