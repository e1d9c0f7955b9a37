// Compiled only when the build has MPI (INTERPROBE_HAVE_MPI). MPI itself is called through
// interprobe-mpi.so (mpi_shim.hpp), loaded when `allreduce` starts MPI.
#include "probes/collective/mpi_world.hpp"

#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "probes/collective/mpi_shim.hpp"
#include "common/errors.hpp"
#include "common/text.hpp"

namespace interprobe::collective {

namespace {

void check(int rc, const char* call) {
  if (rc == 0) return;  // MPI_SUCCESS
  char text[512] = {};
  mpi_shim().error_string(rc, text, sizeof text);
  throw VendorError(call, rc, text);
}

class MpiWorld final : public RankGroup {
 public:
  explicit MpiWorld(const interprobe_mpi_shim& mpi) : mpi_(mpi) {
    check(mpi_.world_rank_size(&rank_, &size_), "MPI_Comm_rank/size");
    // Processes sharing memory are one node: local rank picks the GPU, node count is reported.
    check(mpi_.node_rank_size(&local_rank_, &local_size_), "MPI_Comm_split_type(shared)");
    int leader = local_rank_ == 0 ? 1 : 0;
    check(mpi_.sum_int(&leader), "MPI_Allreduce(nodes)");
    nodes_ = leader;
  }
  int process_rank() const override { return rank_; }
  int process_count() const override { return size_; }
  int local_process_rank() const override { return local_rank_; }
  int local_process_count() const override { return local_size_; }
  int nodes() const override { return nodes_; }
  void barrier() override { check(mpi_.barrier(), "MPI_Barrier"); }
  std::vector<std::byte> broadcast(const std::vector<std::byte>& blob) override {
    std::uint64_t length = blob.size();
    check(mpi_.bcast_u64(&length), "MPI_Bcast(length)");
    std::vector<std::byte> out = rank_ == 0 ? blob : std::vector<std::byte>(length);
    check(mpi_.bcast_bytes(out.data(), static_cast<int>(length)), "MPI_Bcast");
    return out;
  }
  std::uint64_t broadcast_word(std::uint64_t word) override {
    check(mpi_.bcast_u64_idle(&word, 1000), "MPI_Ibcast(word)");  // 1 ms polls: idle, yet prompt
    return word;
  }
  std::vector<std::optional<std::vector<std::byte>>> gather_to_first(const std::vector<std::byte>& blob,
                                                                     std::size_t max_bytes) override {
    // Every process learns every size first, so all of them agree which blobs are sent: one
    // over its limit, or past the total the receiving int displacements can address, is not.
    const int mine = blob.size() > max_bytes || blob.size() > kMaxGatherTotalBytes ? -1 : static_cast<int>(blob.size());
    std::vector<int> sizes(static_cast<std::size_t>(size_));
    check(mpi_.allgather_int_idle(mine, sizes.data(), 1000), "MPI_Iallgather(sizes)");
    std::vector<int> counts(sizes.size()), displacements(sizes.size());
    std::size_t total = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] >= 0 && total + static_cast<std::size_t>(sizes[i]) <= kMaxGatherTotalBytes) {
        counts[i] = sizes[i];
        displacements[i] = static_cast<int>(total);
        total += static_cast<std::size_t>(sizes[i]);
      } else {
        sizes[i] = -1;  // not sent: the receiver records it as missing
      }
    }
    const int sent = sizes[static_cast<std::size_t>(rank_)] < 0 ? 0 : counts[static_cast<std::size_t>(rank_)];
    std::vector<std::byte> received(rank_ == 0 ? std::max<std::size_t>(total, 1) : 0);
    check(mpi_.gatherv_bytes_idle(blob.data(), sent, received.data(), counts.data(), displacements.data(), 1000),
          "MPI_Igatherv(blobs)");
    std::vector<std::optional<std::vector<std::byte>>> out;
    if (rank_ != 0) return out;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] < 0) {
        out.emplace_back(std::nullopt);
        continue;
      }
      auto from = received.begin() + displacements[i];
      out.emplace_back(std::vector<std::byte>(from, from + counts[i]));
    }
    return out;
  }
  void max_over_processes(std::vector<double>& values) override {
    check(mpi_.max_doubles(values.data(), static_cast<int>(values.size())), "MPI_Allreduce(max)");
  }
  void mean_over_processes(std::vector<double>& values) override {
    check(mpi_.sum_doubles(values.data(), static_cast<int>(values.size())), "MPI_Allreduce(sum)");
    for (double& v : values) v /= size_;
  }
  std::uint64_t sum_over_processes(std::uint64_t value) override {
    check(mpi_.sum_u64(&value), "MPI_Allreduce(sum)");
    return value;
  }
  [[noreturn]] void abort_all(const std::string& why, int exit_code) override {
    std::fprintf(stderr, "interprobe: rank %d: %s; ending every rank of the job\n", rank_, why.c_str());
    std::fflush(stderr);
    mpi_.abort_world(exit_code);
    std::abort();
  }

 private:
  const interprobe_mpi_shim& mpi_;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, nodes_ = 1;
};

std::unique_ptr<MpiWorld>& world_instance() {
  static std::unique_ptr<MpiWorld> world;
  return world;
}

}  // namespace

bool mpi_compiled_in() { return true; }

RankGroup& start_mpi() {
  auto& world = world_instance();
  if (world) return *world;
  const auto& mpi = mpi_shim();  // loads interprobe-mpi.so, and with it libmpi
  check(mpi.init_funneled(), "MPI_Init_thread");
  world = std::make_unique<MpiWorld>(mpi);
  return *world;
}

bool mpi_started() { return world_instance() != nullptr; }

void finish_mpi(bool peers_in_step, int exit_code) {
  if (!mpi_started()) return;
  const auto& mpi = mpi_shim();
  int finalized = 0;
  mpi.finalized(&finalized);
  if (finalized) return;
  if (!peers_in_step) mpi.abort_world(exit_code);
  mpi.finalize();
}

std::string mpi_library_version() {
  char text[8192] = {};  // MPI_MAX_LIBRARY_VERSION_STRING is 256 (Open MPI) or 8192 (MPICH)
  mpi_shim().library_version(text, sizeof text);
  std::string version(text);
  if (version.empty()) return "unknown MPI";
  auto lines = split(version, '\n');
  auto first = lines.empty() ? std::string_view(version) : std::string_view(lines.front());
  return std::string(trim(first.substr(0, first.find(','))));
}

}  // namespace interprobe::collective
