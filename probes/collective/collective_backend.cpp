#include "probes/collective/collective_backend.hpp"

#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "probes/collective/allreduce_sweep.hpp"

namespace interprobe::collective {

CollectiveHang::CollectiveHang(std::uint64_t bytes, double waited_s, const std::string& detail)
    : std::runtime_error(fmt::format("all-reduce hung at {} bytes: not finished after {:.0f} s ({})", bytes, waited_s, detail)),
      bytes_(bytes),
      waited_s_(waited_s) {}

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

}  // namespace interprobe::collective
