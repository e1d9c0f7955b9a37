// Compiled only when the build has MPI (INTERPROBE_HAVE_MPI); MPI is called through
// interprobe-mpi.so (mpi_shim.hpp).
#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "probes/collective/collective_ops.hpp"
#include "probes/collective/mpi_shim.hpp"
#include "probes/collective/mpi_world.hpp"
#include "common/errors.hpp"

namespace interprobe::collective {

namespace {

// Sums of 16-bit floats, element by element through float: what a GPU's reduction does too.
template <float (*Decode)(std::uint16_t), std::uint16_t (*Encode)(float)>
void sum_16bit(const void* in, void* inout, int length) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < length; ++i) b[i] = Encode(Decode(a[i]) + Decode(b[i]));
}

class MpiBackend final : public CollectiveBackend {
 public:
  explicit MpiBackend(RankGroup& world) : CollectiveBackend(world), mpi_(mpi_shim()) {
    mpi_.create_sum16_ops(&sum_16bit<half_to_float, float_to_half>, &sum_16bit<bfloat16_to_float, float_to_bfloat16>);
  }
  ~MpiBackend() override { mpi_.free_sum16_ops(); }
  report::AllreduceBackend kind() const override { return report::AllreduceBackend::mpi; }
  int ranks() const override { return group().process_count(); }
  int rank() const override { return group().process_rank(); }
  std::string library_version() const override { return mpi_library_version(); }

  void allocate(std::size_t bytes) override {
    // Written once here so every page is mapped before anything is timed.
    send_.assign(bytes, std::byte{0});
    recv_.assign(bytes, std::byte{0});
  }
  void write(BufferRole role, int, const std::byte* host, std::size_t bytes) override {
    std::memcpy(buffer(role, bytes), host, bytes);
  }
  void read(BufferRole role, int, std::byte* host, std::size_t bytes) override {
    std::memcpy(host, buffer(role, bytes), bytes);
  }
  void allreduce(std::size_t count, Dtype dtype, bool in_place) override { start(report::CollectiveOp::all_reduce, count, dtype, in_place); }

  void start(report::CollectiveOp op, std::size_t count, Dtype dtype, bool in_place) override {
    using report::CollectiveOp;
    const std::size_t width = element_bytes(dtype);
    // MPI counts are ints: elements for the reductions, bytes (a whole buffer at most) for the others.
    const std::size_t largest = std::max(send_elements(op, count, ranks()), recv_elements(op, count, ranks())) * width;
    if ((op == CollectiveOp::all_reduce ? count : largest) > static_cast<std::size_t>(INT_MAX))
      throw InputError(fmt::format("{} elements per rank exceed MPI's int count; lower --max", count));
    std::byte* recv = buffer(BufferRole::recv, recv_elements(op, count, this->ranks()) * width);
    const void* send = in_place ? nullptr : static_cast<const void*>(buffer(BufferRole::send, send_elements(op, count, this->ranks()) * width));
    const int type = dtype == Dtype::float32 ? 0 : (dtype == Dtype::float16 ? 1 : 2);
    const int n = static_cast<int>(count), bytes = static_cast<int>(count * width);
    int rc = 0;
    const char* call = "MPI_Allreduce";
    switch (op) {
      case CollectiveOp::all_reduce: rc = mpi_.allreduce_sum(send, recv, n, type); break;
      case CollectiveOp::all_gather: call = "MPI_Allgather", rc = mpi_.allgather_bytes(send, recv, bytes); break;
      case CollectiveOp::reduce_scatter: call = "MPI_Reduce_scatter_block", rc = mpi_.reduce_scatter_sum(send, recv, n, type); break;
      case CollectiveOp::alltoall: call = "MPI_Alltoall", rc = mpi_.alltoall_bytes(send, recv, bytes); break;
      case CollectiveOp::sendrecv: {
        call = "MPI_Sendrecv";
        const int me = rank(), size = this->ranks();
        rc = mpi_.sendrecv_bytes(send, recv, bytes, (me + 1) % size, (me + size - 1) % size);
        break;
      }
      case CollectiveOp::broadcast:
        // Out of place the root's send buffer is the source: copied into its receive buffer, which MPI_Bcast sends.
        call = "MPI_Bcast";
        if (!in_place && rank() == 0) std::memcpy(recv, send, count * width);
        rc = mpi_.bcast_bytes(recv, bytes);
        break;
    }
    if (rc != 0) throw VendorError(call, rc, fmt::format("{} elements of {}", count, to_string(dtype)));
  }
  // MPI_Reduce_scatter_block in place leaves the rank's block at the start of its buffer.
  std::size_t in_place_result_offset(std::size_t, int) const override { return 0; }
  // MPI_Allreduce returns when done. It cannot be aborted and resumed either: a hang here is
  // ended by the launcher (mpirun --timeout), not by this process.
  void synchronize(Clock::time_point, std::uint64_t) override {}

 private:
  std::byte* buffer(BufferRole role, std::size_t bytes) {
    auto& b = role == BufferRole::send ? send_ : recv_;
    if (bytes > b.size()) throw std::logic_error("MPI backend: access beyond the allocated buffer");
    return b.data();
  }
  const interprobe_mpi_shim& mpi_;
  std::vector<std::byte> send_, recv_;
};

}  // namespace

std::unique_ptr<CollectiveBackend> make_mpi_backend(RankGroup& world) { return std::make_unique<MpiBackend>(world); }

}  // namespace interprobe::collective
