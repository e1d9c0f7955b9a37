#pragma once
// The processes taking part in a collective, for the host-side agreements a sweep needs:
// everyone checks the same options, times the same sizes, and reports the slowest rank.
// One process (NCCL driving every local GPU) is a group of one; under mpirun it is
// MPI_COMM_WORLD (probes/collective/mpi_world.hpp).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace interprobe::collective {

inline constexpr std::size_t kMaxGatherTotalBytes = std::size_t{1} << 30;

class RankGroup {
 public:
  virtual ~RankGroup() = default;
  virtual int process_rank() const = 0;   // this process: 0 prints and writes the report
  virtual int process_count() const = 0;
  virtual int local_process_rank() const = 0;  // among the processes on this node (GPU choice)
  virtual int local_process_count() const = 0;
  virtual int nodes() const = 0;
  virtual void barrier() = 0;
  // Every process returns process 0's blob.
  virtual std::vector<std::byte> broadcast(const std::vector<std::byte>& blob) = 0;
  // Element-wise maximum over processes, in place (same length everywhere).
  virtual void max_over_processes(std::vector<double>& values) = 0;
  // Element-wise mean over processes, in place (nccl-tests reports the mean rank's time).
  virtual void mean_over_processes(std::vector<double>& values) = 0;
  virtual std::uint64_t sum_over_processes(std::uint64_t value) = 0;
  // Every process returns process 0's word. The others may wait here for long (while process 0
  // of `run` probes alone), so an MPI group waits without spinning a core.
  virtual std::uint64_t broadcast_word(std::uint64_t word);
  // Every process's blob to process 0, in rank order (the fleet report); the others get an
  // empty list. Waits without spinning, like broadcast_word. A blob over `max_bytes` (or past a
  // total of kMaxGatherTotalBytes) arrives as nullopt, so no process sends what cannot be held.
  // The base class serves a group of one; a group of more throws UnsupportedError.
  virtual std::vector<std::optional<std::vector<std::byte>>> gather_to_first(const std::vector<std::byte>& blob,
                                                                             std::size_t max_bytes);
  // Ends every process of the job at once: for a failure only some processes saw, which would
  // otherwise leave the others waiting in a collective for ever.
  [[noreturn]] virtual void abort_all(const std::string& why, int exit_code) = 0;
};

// One process: agreements are trivial.
class SingleProcessGroup final : public RankGroup {
 public:
  int process_rank() const override { return 0; }
  int process_count() const override { return 1; }
  int local_process_rank() const override { return 0; }
  int local_process_count() const override { return 1; }
  int nodes() const override { return 1; }
  void barrier() override {}
  std::vector<std::byte> broadcast(const std::vector<std::byte>& blob) override { return blob; }
  void max_over_processes(std::vector<double>&) override {}
  void mean_over_processes(std::vector<double>&) override {}
  std::uint64_t sum_over_processes(std::uint64_t value) override { return value; }
  [[noreturn]] void abort_all(const std::string& why, int exit_code) override;
};

// Whether this process was started by an MPI launcher (OpenMPI, MPICH/Hydra, PMIx, Slurm's
// srun with PMI): decided from the environment, without initializing MPI.
bool launched_by_mpi_launcher();
// The world size and this process's rank the launcher announced, without starting MPI: 0 and
// nullopt when it announced none (a PMIx-only launch says the rank but not always the size).
int launcher_world_size();
std::optional<int> launcher_world_rank();

}  // namespace interprobe::collective
