#include <gtest/gtest.h>
#include <unistd.h>

#include "probes/bandwidth/cpu_cycle.hpp"
#include "probes/bandwidth/host_engine.hpp"
#include "probes/bandwidth/host_memory.hpp"
#include "probes/bandwidth/sweep.hpp"
#include "common/errors.hpp"

using namespace interprobe;

namespace {
SweepOptions quick_options(std::vector<std::uint64_t> sizes) {
  SweepOptions o;
  o.sizes = std::move(sizes);
  o.min_samples = 3;
  o.max_samples = 10;
  o.size_budget_s = 0.01;
  o.target_cv = 0.5;
  return o;
}

report::BandwidthSweep run(const HostPathSpec& spec, std::vector<std::uint64_t> sizes) {
  auto engine = make_host_engine(spec, NumaPlacement::detect());
  report::BandwidthSweep sweep = engine->describe();
  run_sweep(*engine, quick_options(std::move(sizes)), [&](const auto& p) { sweep.points.push_back(p); });
  sweep.fit = fit_sweep(sweep);
  return sweep;
}
}  // namespace

TEST(HostEngine, MemcpyMovesTheDataAtEverySize) {
  HostPathSpec spec;
  spec.threads = 2;
  auto sweep = run(spec, {1, 3, 4096, 1u << 20, 3u << 20});
  EXPECT_EQ(sweep.engine, report::BandwidthEngine::host);
  EXPECT_EQ(sweep.kind, report::CopyKind::memcpy);
  EXPECT_EQ(sweep.src, "node0");
  EXPECT_EQ(sweep.memory_kind, report::MemoryKind::pageable);
  EXPECT_EQ(sweep.threads, 2);
  ASSERT_EQ(sweep.points.size(), 5u);
  for (const auto& p : sweep.points) {
    EXPECT_EQ(p.verified, true) << p.bytes;
    EXPECT_GT(p.gbps, 0.0);
    EXPECT_GE(p.samples, 3);
    EXPECT_LE(p.min_us, p.median_us);
    EXPECT_LE(p.median_us, p.max_us);
  }
  EXPECT_GT(sweep.points.front().copies_per_sample, 1);  // a 1-byte copy is batched
  EXPECT_TRUE(sweep.fit);
}

TEST(HostEngine, StagedCopyThroughDoubleBufferedBounceBuffer) {
  HostPathSpec spec;
  spec.kind = "staged";
  spec.chunk_bytes = 64u << 10;
  auto sweep = run(spec, {100, 64u << 10, (1u << 20) + 13});  // below one chunk, one chunk, many + a tail
  EXPECT_EQ(sweep.kind, report::CopyKind::staged);
  EXPECT_EQ(sweep.threads, 2);
  ASSERT_EQ(sweep.points.size(), 3u);
  for (const auto& p : sweep.points) EXPECT_EQ(p.verified, true) << p.bytes;
}

TEST(HostEngine, LockedMemoryEitherLocksOrSaysWhy) {
  HostPathSpec spec;
  spec.locked = true;
  auto engine = make_host_engine(spec, NumaPlacement::detect());
  try {
    engine->reserve(1u << 20);
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("RLIMIT_MEMLOCK"), std::string::npos);
    return;
  }
  engine->prepare(1u << 20);
  engine->copy_us(1);
  EXPECT_TRUE(engine->verify());
}

TEST(HostEngine, VerifyCatchesACopyThatDidNotHappen) {
  auto engine = make_host_engine(HostPathSpec{}, NumaPlacement::detect());
  engine->reserve(4096);
  engine->prepare(4096);
  EXPECT_FALSE(engine->verify());  // prepare leaves a destination that differs in every byte
  engine->copy_us(1);
  EXPECT_TRUE(engine->verify());
}

// A chain of dependent adds against a chain of twice as many: the second takes twice as long, so
// what is timed is the chain (one add a cycle), not the loop around it or the clock reads.
TEST(CpuCycle, IsOneDependentAddAndTwiceTheAddsTakeTwiceTheTime) {
  double cycle_ns = measure_cycle_ns();
  EXPECT_GT(cycle_ns, 0.1);  // 10 GHz
  EXPECT_LT(cycle_ns, 2.0);  // 500 MHz
  double ratio = fastest_add_chain_ns(1u << 17, 31) / fastest_add_chain_ns(1u << 16, 31);
  EXPECT_GT(ratio, 1.7);
  EXPECT_LT(ratio, 2.3);
}

TEST(NumaPlacement, DescribesThisMachine) {
  auto numa = NumaPlacement::detect();
  ASSERT_FALSE(numa->nodes().empty());
  EXPECT_GE(numa->cpus_near(numa->nodes().front()), 1u);
  if (!numa->can_place()) {
    EXPECT_FALSE(numa->reason().empty());
  }
}

// The engine keeps the references get() returns while it asks for more buffers: growing the
// cache must not move the earlier ones (a vector did, and the copy read freed memory).
TEST(HostBufferCache, EarlierBuffersStayPutWhenMoreAreAdded) {
  HostBufferCache cache(NumaPlacement::detect());
  bool fresh = false;
  HostBuffer& src = cache.get("src", 0, 4096, fresh);
  EXPECT_TRUE(fresh);
  std::byte* src_data = reinterpret_cast<std::byte*>(src.data());
  for (const char* role : {"dst", "bounce", "extra1", "extra2", "extra3"}) cache.get(role, 0, 4096, fresh);
  HostBuffer& again = cache.get("src", 0, 4096, fresh);
  EXPECT_FALSE(fresh);
  EXPECT_EQ(&again, &src);
  EXPECT_EQ(reinterpret_cast<std::byte*>(src.data()), src_data);
  EXPECT_EQ(src.size(), 4096u);
}

// Each buffer is a mapping of its own on a 2 MiB boundary, so smaps describes it alone and
// every 2 MiB of it can be a huge page.
TEST(HostBuffer, IsItsOwnAlignedMappingWithItsOwnBacking) {
  auto numa = NumaPlacement::detect();
  HostBuffer a(numa, 8u << 20, 0, PagePolicy::huge);
  HostBuffer b(numa, 8u << 20, 0, PagePolicy::huge);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % (2u << 20), 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % (2u << 20), 0u);
  a.touch();
  auto huge_a = a.huge_page_bytes(), huge_b = b.huge_page_bytes();
  if (!huge_a || !huge_b) GTEST_SKIP() << "/proc/self/smaps unreadable";
  EXPECT_LE(*huge_a, a.size());
  EXPECT_EQ(*huge_b, 0u) << "b is untouched: a's huge pages must not be counted for it";
  HostBuffer small(numa, 8u << 20, 0, PagePolicy::small);
  small.touch();
  EXPECT_EQ(small.huge_page_bytes(), 0u) << "MADV_NOHUGEPAGE: 4 KiB pages only";
}

TEST(HostEngine, RecordsBuffersTheirPolicyAndTheCopyCpus) {
  HostPathSpec spec;
  spec.pages = PagePolicy::small;
  auto engine = make_host_engine(spec, NumaPlacement::detect());
  report::BandwidthSweep sweep = engine->describe();
  EXPECT_EQ(sweep.pages, PagePolicy::small);
  run_sweep(*engine, quick_options({4096, 4u << 20}), [&](const auto& p) { sweep.points.push_back(p); });
  auto buffers = engine->buffers();
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[0].role, interprobe::report::HostBufferRole::src);
  EXPECT_EQ(buffers[1].role, interprobe::report::HostBufferRole::dst);
  for (const auto& b : buffers) {
    EXPECT_GE(b.bytes, 4 << 20);
    if (b.huge_page_bytes) {
      EXPECT_EQ(*b.huge_page_bytes, 0);
    }
  }
  long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
  for (const auto& p : sweep.points) {
    ASSERT_FALSE(p.copy_cpus.empty());
    for (auto cpu : p.copy_cpus) {
      EXPECT_GE(cpu, 0);
      EXPECT_LT(cpu, cpus);
    }
  }
}
