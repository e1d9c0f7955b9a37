// The collectives beside all-reduce (collective_ops.hpp) through the sweep, on a test double that
// runs each op on host buffers for `ranks` ranks of one process: nccl-tests' byte accounting and
// bus-bandwidth factors, and a data check that catches a block delivered to the wrong place.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/errors.hpp"
#include "probes/collective/allreduce_sweep.hpp"
#include "probes/collective/collective_ops.hpp"

namespace ic = interprobe::collective;
using ic::CollectiveOp;
using ic::Dtype;

namespace {

// Every op on host buffers, as collective_ops.hpp lays them out; `swap_alltoall_blocks` delivers
// the first two blocks of an all-to-all to each other's place (a routing bug).
class MemoryBackend final : public ic::CollectiveBackend {
 public:
  MemoryBackend(ic::RankGroup& group, int ranks) : CollectiveBackend(group), send_(static_cast<std::size_t>(ranks)), recv_(send_.size()) {}
  bool swap_alltoall_blocks = false;
  bool broadcast_from_rank_one = false;

  interprobe::report::AllreduceBackend kind() const override { return interprobe::report::AllreduceBackend::nccl; }
  int ranks() const override { return static_cast<int>(send_.size()); }
  int rank() const override { return 0; }
  int local_ranks() const override { return ranks(); }
  std::string library_version() const override { return "memory 1"; }
  void allocate(std::size_t bytes) override {
    for (auto* all : {&send_, &recv_})
      for (auto& b : *all) b.assign(bytes, std::byte{0});
  }
  void write(ic::BufferRole role, int local, const std::byte* host, std::size_t bytes) override {
    std::memcpy(buf(role, local), host, bytes);
  }
  void read(ic::BufferRole role, int local, std::byte* host, std::size_t bytes) override {
    std::memcpy(host, buf(role, local), bytes);
  }
  void allreduce(std::size_t, Dtype, bool) override { FAIL() << "not an all-reduce test"; }
  void synchronize(ic::Clock::time_point, std::uint64_t) override {}

  void start(CollectiveOp op, std::size_t count, Dtype dtype, bool in_place) override {
    const std::size_t w = ic::element_bytes(dtype), block = count * w, n = send_.size();
    std::vector<std::vector<std::byte>> out(n);
    for (std::size_t r = 0; r < n; ++r) out[r] = recv_[r];
    for (std::size_t r = 0; r < n; ++r) {
      const std::byte* send = in_place ? recv_[r].data() : send_[r].data();
      switch (op) {
        case CollectiveOp::all_gather:
          for (std::size_t to = 0; to < n; ++to) std::memcpy(out[to].data() + r * block, send + (in_place ? r * block : 0), block);
          break;
        case CollectiveOp::reduce_scatter:
          for (std::size_t to = 0; to < n; ++to)
            for (std::size_t i = 0; i < count; ++i) {
              std::byte* at = out[to].data() + (in_place ? to * block : 0) + i * w;
              const float before = r == 0 ? 0.0f : ic::decode_element(dtype, at);
              ic::encode_element(dtype, before + ic::decode_element(dtype, send + to * block + i * w), at);
            }
          break;
        case CollectiveOp::alltoall:
          for (std::size_t to = 0; to < n; ++to) {
            std::size_t place = r;
            if (swap_alltoall_blocks && r < 2) place = 1 - r;
            std::memcpy(out[to].data() + place * block, send + to * block, block);
          }
          break;
        case CollectiveOp::broadcast:
          if (r == (broadcast_from_rank_one ? 1u : 0u))
            for (std::size_t to = 0; to < n; ++to) std::memcpy(out[to].data(), send, block);
          break;
        case CollectiveOp::sendrecv: std::memcpy(out[(r + 1) % n].data(), send, block); break;
        case CollectiveOp::all_reduce: break;
      }
    }
    recv_ = std::move(out);
  }

 private:
  std::byte* buf(ic::BufferRole role, int local) {
    return (role == ic::BufferRole::send ? send_ : recv_).at(static_cast<std::size_t>(local)).data();
  }
  std::vector<std::vector<std::byte>> send_, recv_;
};

ic::SweepPlan plan_8_to_4k() {
  ic::SweepPlan plan;
  plan.sizes_bytes = interprobe::geometric_sizes(8, 4096, 2);
  plan.iterations = 2;
  plan.samples = 2;
  plan.warmup_iterations = 1;
  return plan;
}

}  // namespace

TEST(CollectiveOps, BusbwFactorsAndBytesAreNcclTests) {
  EXPECT_DOUBLE_EQ(ic::busbw_factor(CollectiveOp::all_reduce, 4), 1.5);
  for (auto op : {CollectiveOp::all_gather, CollectiveOp::reduce_scatter, CollectiveOp::alltoall})
    EXPECT_DOUBLE_EQ(ic::busbw_factor(op, 4), 0.75) << to_string(op);
  EXPECT_DOUBLE_EQ(ic::busbw_factor(CollectiveOp::broadcast, 4), 1.0);
  EXPECT_DOUBLE_EQ(ic::busbw_factor(CollectiveOp::sendrecv, 8), 1.0);
  // The size is what algbw divides: n x count for all_gather, reduce_scatter, alltoall.
  EXPECT_EQ(ic::op_count(CollectiveOp::all_gather, 1024, Dtype::float32, 4), 64u);
  EXPECT_EQ(ic::algbw_bytes(CollectiveOp::all_gather, 64, Dtype::float32, 4), 1024u);
  EXPECT_EQ(ic::op_count(CollectiveOp::broadcast, 1024, Dtype::float32, 4), 256u);
  EXPECT_EQ(ic::op_count(CollectiveOp::alltoall, 8, Dtype::float32, 4), 1u);  // at least one element
  EXPECT_EQ(ic::send_elements(CollectiveOp::reduce_scatter, 10, 4), 40u);
  EXPECT_EQ(ic::recv_elements(CollectiveOp::all_gather, 10, 4), 40u);
  EXPECT_FALSE(ic::has_in_place(CollectiveOp::alltoall));
  EXPECT_TRUE(ic::has_in_place(CollectiveOp::reduce_scatter));
}

TEST(CollectiveOps, OpListParsesAllAndNamesTheOptionOnATypo) {
  EXPECT_EQ(ic::parse_op_list("alltoall,all_gather,alltoall"), (std::vector{CollectiveOp::alltoall, CollectiveOp::all_gather}));
  EXPECT_EQ(ic::parse_op_list("all").size(), 6u);
  EXPECT_EQ(ic::op_list_text(ic::parse_op_list("sendrecv,broadcast")), "sendrecv,broadcast");
  try {
    ic::parse_op_list("allgather");
    FAIL() << "accepted allgather";
  } catch (const interprobe::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--ops 'allgather'"), std::string::npos) << e.what();
  }
}

TEST(CollectiveOps, EveryOpSweepsCheckedWithItsFactorOnFourRanks) {
  for (auto op : {CollectiveOp::all_gather, CollectiveOp::reduce_scatter, CollectiveOp::alltoall, CollectiveOp::broadcast,
                  CollectiveOp::sendrecv}) {
    for (Dtype dtype : {Dtype::float32, Dtype::bfloat16}) {
      ic::SingleProcessGroup group;
      MemoryBackend backend(group, 4);
      interprobe::report::AllreduceSweep sweep;
      ic::run_collective_sweep(backend, plan_8_to_4k(), op, dtype, sweep);
      // 8 .. 4K: sizes below n elements collapse into one of n elements.
      ASSERT_FALSE(sweep.points.empty()) << to_string(op);
      EXPECT_EQ(sweep.points.size() % (ic::has_in_place(op) ? 2 : 1), 0u);
      for (const auto& p : sweep.points) {
        EXPECT_EQ(p.wrong_elements, 0) << to_string(op) << " " << to_string(dtype) << " " << p.bytes << (p.in_place ? " in" : " out");
        EXPECT_EQ(static_cast<std::uint64_t>(p.bytes), ic::algbw_bytes(op, static_cast<std::uint64_t>(p.elements_per_rank), dtype, 4));
        EXPECT_DOUBLE_EQ(p.busbw_gbps, p.algbw_gbps * ic::busbw_factor(op, 4)) << to_string(op);
      }
      EXPECT_EQ(sweep.points.back().bytes, 4096) << to_string(op);
    }
  }
}

TEST(CollectiveOps, BlocksInTheWrongPlaceAreCountedWrong) {
  ic::SingleProcessGroup group;
  MemoryBackend alltoall(group, 4);
  alltoall.swap_alltoall_blocks = true;
  interprobe::report::AllreduceSweep sweep;
  ic::run_collective_sweep(alltoall, plan_8_to_4k(), CollectiveOp::alltoall, Dtype::float32, sweep);
  EXPECT_GT(sweep.summary.wrong_elements_total, 0);

  MemoryBackend broadcast(group, 4);
  broadcast.broadcast_from_rank_one = true;
  interprobe::report::AllreduceSweep from_one;
  ic::run_collective_sweep(broadcast, plan_8_to_4k(), CollectiveOp::broadcast, Dtype::float16, from_one);
  EXPECT_GT(from_one.summary.wrong_elements_total, 0);
}
