// Compiled only when the build has MPI (INTERPROBE_HAVE_MPI).
#include "probes/collective/mpi_world.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "probes/common/errors.hpp"
#include "probes/common/text.hpp"

namespace interprobe::collective {

namespace {

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw VendorError(call, rc, text);
}

class MpiWorld final : public RankGroup {
 public:
  MpiWorld() {
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    // Processes sharing memory are one node: local rank picks the GPU, node count is reported.
    MPI_Comm node = MPI_COMM_NULL;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
    check(MPI_Comm_rank(node, &local_rank_), "MPI_Comm_rank(node)");
    check(MPI_Comm_size(node, &local_size_), "MPI_Comm_size(node)");
    MPI_Comm_free(&node);
    int leader = local_rank_ == 0 ? 1 : 0;
    check(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce(nodes)");
    nodes_ = leader;
  }
  int process_rank() const override { return rank_; }
  int process_count() const override { return size_; }
  int local_process_rank() const override { return local_rank_; }
  int local_process_count() const override { return local_size_; }
  int nodes() const override { return nodes_; }
  void barrier() override { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }
  std::vector<std::byte> broadcast(const std::vector<std::byte>& blob) override {
    std::uint64_t length = blob.size();
    check(MPI_Bcast(&length, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast(length)");
    std::vector<std::byte> out = rank_ == 0 ? blob : std::vector<std::byte>(length);
    check(MPI_Bcast(out.data(), static_cast<int>(length), MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
    return out;
  }
  void max_over_processes(std::vector<double>& values) override {
    check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
          "MPI_Allreduce(max)");
  }
  std::uint64_t sum_over_processes(std::uint64_t value) override {
    check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce(sum)");
    return value;
  }
  [[noreturn]] void abort_all(const std::string& why, int exit_code) override {
    std::fprintf(stderr, "interprobe: rank %d: %s; ending every rank of the job\n", rank_, why.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::abort();
  }

 private:
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
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    // One thread calls MPI; FUNNELED is what every MPI offers.
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  }
  world = std::make_unique<MpiWorld>();
  return *world;
}

bool mpi_started() { return world_instance() != nullptr; }

void finish_mpi(bool peers_in_step, int exit_code) {
  if (!mpi_started()) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (!peers_in_step) MPI_Abort(MPI_COMM_WORLD, exit_code);
  MPI_Finalize();
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return "unknown MPI";
  std::string version(text, static_cast<std::size_t>(length));
  auto lines = split(version, '\n');
  auto first = lines.empty() ? std::string_view(version) : std::string_view(lines.front());
  return std::string(trim(first.substr(0, first.find(','))));
}

}  // namespace interprobe::collective
