// The CUDA copy engine in this process against the simulated libcuda: a peer copy that never
// completes makes the batch fail with the reason after the completion timeout, not hang.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "common/dynlib.hpp"
#include "common/host_root.hpp"
#include "common/units.hpp"
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

// A driver that stages peer copies (P2P off) synchronously blocks enqueue behind the hold kernel:
// the spin is bounded, the stall seen, the batch timed again without it, and the notes say so.
TEST(CudaEngineSimulated, SynchronouslyStagedPeerCopiesFallBackToPlainTiming) {
  interprobe::testing::sim_load(R"({"devices": [{}, {}], "peer_access": "none",
                                    "driver": {"synchronous_staged_peer_copies": true}})");
  set_library_override(VendorLibrary::cuda_driver, INTERPROBE_SIM_CUDA);
  CudaPlan plan;
  plan.completion_timeout_s = 5;
  HostRoot root;
  CudaPaths paths = make_cuda_paths(plan, NumaPlacement::detect(), root);
  auto it = std::find_if(paths.engines.begin(), paths.engines.end(),
                         [](const auto& e) { return e->describe().kind == interprobe::report::CopyKind::p2p_off; });
  ASSERT_NE(it, paths.engines.end());
  CopyEngine& engine = **it;
  engine.reserve(1 << 16);
  engine.prepare(1 << 16);
  auto started = std::chrono::steady_clock::now();
  double first_us = engine.copy_us(4);
  double first_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_LT(first_s, 3.0);  // one bounded spin (1 s), not 10 s per size
  EXPECT_GT(first_us, 0);
  EXPECT_LT(first_us, 0.5e6) << "the retimed batch still holds the stall";
  EXPECT_TRUE(engine.verify());
  started = std::chrono::steady_clock::now();
  EXPECT_GT(engine.copy_us(4), 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 0.5);  // no spin again
  auto notes = engine.timing_notes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("without the hold kernel"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find(format_bytes(1 << 16)), std::string::npos) << notes[0];
  engine.release();
}

}  // namespace
