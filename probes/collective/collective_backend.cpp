#include "probes/collective/collective_backend.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "probes/collective/allreduce_sweep.hpp"
#include "common/errors.hpp"

namespace interprobe::collective {

CollectiveHang::CollectiveHang(std::uint64_t bytes, double waited_s, const std::string& detail)
    : std::runtime_error(fmt::format("all-reduce hung at {} bytes: not finished after {:.0f} s ({})", bytes, waited_s, detail)),
      bytes_(bytes),
      waited_s_(waited_s) {}

void CollectiveBackend::start(report::CollectiveOp op, std::size_t count, Dtype dtype, bool in_place) {
  if (op != report::CollectiveOp::all_reduce)
    throw UnsupportedError(fmt::format("the {} backend measures only all_reduce", to_string(kind())));
  allreduce(count, dtype, in_place);
}

std::uint64_t CollectiveBackend::count_wrong(const std::byte* expected, std::size_t count, Dtype dtype) {
  const std::size_t bytes = count * element_bytes(dtype);
  std::unique_ptr<std::byte[]> actual(new std::byte[bytes]);  // uninitialized: read() fills it
  std::uint64_t wrong = 0;
  for (int local = 0; local < local_ranks(); ++local) {
    read(BufferRole::recv, local, actual.get(), bytes);
    wrong += count_mismatches(actual.get(), expected, count, dtype);
  }
  return wrong;
}

std::uint64_t RankGroup::broadcast_word(std::uint64_t word) {
  std::vector<std::byte> blob(sizeof word);
  std::memcpy(blob.data(), &word, sizeof word);
  const auto theirs = broadcast(blob);
  if (theirs.size() == sizeof word) std::memcpy(&word, theirs.data(), sizeof word);
  return word;
}

std::vector<std::optional<std::vector<std::byte>>> RankGroup::gather_to_first(const std::vector<std::byte>& blob,
                                                                              std::size_t max_bytes) {
  if (process_count() != 1) throw UnsupportedError("this group of processes cannot gather");
  if (blob.size() > max_bytes || blob.size() > kMaxGatherTotalBytes) return {std::nullopt};
  return {blob};
}

void SingleProcessGroup::abort_all(const std::string& why, int) {
  // No other process can be waiting on this one: an ordinary error is enough.
  throw std::runtime_error(why);
}

bool launched_by_mpi_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS",
                           "MV2_COMM_WORLD_SIZE"}) {
    if (const char* v = std::getenv(name); v && *v) return true;
  }
  return false;
}

namespace {

std::optional<int> integer_variable(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(v, &end, 10);
  if (*end != '\0' || value < 0 || value > 1 << 24) return std::nullopt;
  return static_cast<int>(value);
}

}  // namespace

int launcher_world_size() {
  // Open MPI, MPICH/Hydra and Intel MPI (PMI), MVAPICH, Slurm's srun.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS"}) {
    if (auto v = integer_variable(name)) return *v;
  }
  return 0;
}

std::optional<int> launcher_world_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID"}) {
    if (auto v = integer_variable(name)) return v;
  }
  return std::nullopt;
}

}  // namespace interprobe::collective
