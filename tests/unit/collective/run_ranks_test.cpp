// The words between rank 0 of `mpirun -np N interprobe run` and the other ranks, with a group
// that records what rank 0 sends and replays it to a follower.
#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>
#include <stdexcept>

#include "probes/collective/collective_probe.hpp"
#include "probes/collective/rank_group.hpp"

namespace ic = interprobe::collective;

namespace {

// Rank `rank` of two: broadcast_word returns the queued words (what rank 0 sent), or records
// the word when this is rank 0.
class WordGroup final : public ic::RankGroup {
 public:
  explicit WordGroup(int rank) : rank_(rank) {}
  int process_rank() const override { return rank_; }
  int process_count() const override { return 2; }
  int local_process_rank() const override { return rank_; }
  int local_process_count() const override { return 2; }
  int nodes() const override { return 1; }
  void barrier() override {}
  std::vector<std::byte> broadcast(const std::vector<std::byte>& blob) override { return blob; }
  void max_over_processes(std::vector<double>&) override {}
  void mean_over_processes(std::vector<double>&) override {}
  std::uint64_t sum_over_processes(std::uint64_t value) override { return value; }
  std::uint64_t broadcast_word(std::uint64_t word) override {
    if (rank_ == 0) {
      sent.push_back(word);
      return word;
    }
    if (sent.empty()) throw std::runtime_error("follower waited for a word rank 0 never sent");
    const auto next = sent.front();
    sent.pop_front();
    return next;
  }
  [[noreturn]] void abort_all(const std::string& why, int) override { throw std::runtime_error("abort_all: " + why); }

  std::deque<std::uint64_t> sent;

 private:
  int rank_;
};

}  // namespace

TEST(RunRanks, TheOtherRanksReturnTheExitCodeRankZeroEndsWith) {
  for (int code : {0, 2, 3, 130}) {
    WordGroup rank0(0), rank1(1);
    ic::end_run_ranks(rank0, code);
    ASSERT_EQ(rank0.sent.size(), 1u);
    rank1.sent = rank0.sent;
    EXPECT_EQ(ic::follow_run_ranks(rank1), code);
    EXPECT_TRUE(rank1.sent.empty());
  }
}

TEST(RunRanks, AWordThisBuildDoesNotKnowEndsTheJobInsteadOfGuessing) {
  WordGroup rank1(1);
  rank1.sent = {0x7777};
  try {
    ic::follow_run_ranks(rank1);
    FAIL() << "an unknown word was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("abort_all"), std::string::npos) << e.what();
  }
}

TEST(RunRanks, TheDefaultWordBroadcastCarriesTheWordThroughBroadcast) {
  ic::SingleProcessGroup one;
  EXPECT_EQ(one.broadcast_word(0x1234'5678'9abcULL), 0x1234'5678'9abcULL);
}

TEST(RunRanks, LauncherVariablesGiveSizeAndRank) {
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  EXPECT_EQ(ic::launcher_world_size(), 4);
  EXPECT_EQ(ic::launcher_world_rank(), 3);
  ::setenv("OMPI_COMM_WORLD_RANK", "3x", 1);  // not a number: not a rank
  ::unsetenv("PMIX_RANK");
  ::unsetenv("PMI_RANK");
  ::unsetenv("MV2_COMM_WORLD_RANK");
  ::unsetenv("SLURM_PROCID");
  EXPECT_EQ(ic::launcher_world_rank(), std::nullopt);
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::unsetenv("OMPI_COMM_WORLD_RANK");
}
