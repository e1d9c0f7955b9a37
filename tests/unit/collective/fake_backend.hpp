#pragma once
// A test double of CollectiveBackend: `ranks` ranks driven by one process, each with host
// buffers; all-reduce sums element by element through float, as a GPU would. It can corrupt one
// element of one size, skip the reduction altogether, or hang at a size.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include "probes/collective/collective_backend.hpp"

namespace interprobe::collective::testing {

class FakeBackend final : public CollectiveBackend {
 public:
  FakeBackend(RankGroup& group, int ranks) : CollectiveBackend(group), buffers_(static_cast<std::size_t>(ranks)) {}

  std::optional<std::uint64_t> corrupt_at_bytes;  // flip one element of rank 0's result at this size
  bool corrupt_in_place_only = false;
  bool skip_reduction = false;  // returns without touching recv: a stale or poisoned buffer stays
  std::optional<std::uint64_t> hang_at_bytes;     // synchronize() throws CollectiveHang at this size
  int allreduce_calls = 0;
  bool aborted = false;

  // The backend this double stands in for: the report knows only nccl and mpi.
  report::AllreduceBackend imitates = report::AllreduceBackend::nccl;
  report::AllreduceBackend kind() const override { return imitates; }
  int ranks() const override { return static_cast<int>(buffers_.size()); }
  int rank() const override { return 0; }
  int local_ranks() const override { return ranks(); }
  std::string library_version() const override { return "fake 1.0"; }

  void allocate(std::size_t bytes) override {
    for (auto& b : buffers_) {
      b.send.assign(bytes, std::byte{0});
      b.recv.assign(bytes, std::byte{0});
    }
  }
  void write(BufferRole role, int local, const std::byte* host, std::size_t bytes) override {
    std::memcpy(buffer(role, local).data(), host, bytes);
  }
  void read(BufferRole role, int local, std::byte* host, std::size_t bytes) override {
    std::memcpy(host, buffer(role, local).data(), bytes);
  }
  void allreduce(std::size_t count, Dtype dtype, bool in_place) override {
    ++allreduce_calls;
    if (skip_reduction) return;
    const std::size_t width = element_bytes(dtype);
    std::vector<std::byte> sum(count * width);
    for (std::size_t i = 0; i < count; ++i) {
      float total = 0;
      for (auto& b : buffers_) total += decode_element(dtype, (in_place ? b.recv : b.send).data() + i * width);
      encode_element(dtype, total, sum.data() + i * width);
    }
    for (auto& b : buffers_) std::memcpy(b.recv.data(), sum.data(), sum.size());
    if (corrupt_at_bytes && *corrupt_at_bytes == count * width && (!corrupt_in_place_only || in_place)) {
      // A wrong sum in the last element of rank 0 only: what a broken link would do.
      float wrong = decode_element(dtype, buffers_[0].recv.data() + (count - 1) * width) + 1.0f;
      encode_element(dtype, wrong, buffers_[0].recv.data() + (count - 1) * width);
    }
  }
  void synchronize(Clock::time_point, std::uint64_t bytes) override {
    if (hang_at_bytes && *hang_at_bytes == bytes) {
      aborted = true;
      throw CollectiveHang(bytes, 0.0, "fake hang");
    }
  }

 private:
  struct Buffers {
    std::vector<std::byte> send, recv;
  };
  std::vector<std::byte>& buffer(BufferRole role, int local) {
    auto& b = buffers_.at(static_cast<std::size_t>(local));
    return role == BufferRole::send ? b.send : b.recv;
  }
  std::vector<Buffers> buffers_;
};

// A group of processes whose rank 0 holds other options: broadcast returns `rank0_blob`.
class DisagreeingGroup final : public RankGroup {
 public:
  explicit DisagreeingGroup(std::string rank0) : rank0_(std::move(rank0)) {}
  int process_rank() const override { return 1; }
  int process_count() const override { return 2; }
  int local_process_rank() const override { return 1; }
  int local_process_count() const override { return 2; }
  int nodes() const override { return 1; }
  void barrier() override {}
  std::vector<std::byte> broadcast(const std::vector<std::byte>&) override {
    std::vector<std::byte> out(rank0_.size());
    std::memcpy(out.data(), rank0_.data(), rank0_.size());
    return out;
  }
  void max_over_processes(std::vector<double>&) override {}
  void mean_over_processes(std::vector<double>&) override {}
  std::uint64_t sum_over_processes(std::uint64_t value) override { return value; }
  [[noreturn]] void abort_all(const std::string& why, int) override { throw std::runtime_error("abort_all: " + why); }

 private:
  std::string rank0_;
};

// Two processes, the other one `slower` times slower at whatever it times: the agreements combine
// this process's times with its peer's (results and counts are this process's alone).
class TwoSpeedGroup final : public RankGroup {
 public:
  explicit TwoSpeedGroup(double slower) : slower_(slower) {}
  int process_rank() const override { return 0; }
  int process_count() const override { return 2; }
  int local_process_rank() const override { return 0; }
  int local_process_count() const override { return 2; }
  int nodes() const override { return 1; }
  void barrier() override {}
  std::vector<std::byte> broadcast(const std::vector<std::byte>& blob) override { return blob; }
  void max_over_processes(std::vector<double>& values) override {
    for (double& v : values) v = std::max(v, v * slower_);
  }
  void mean_over_processes(std::vector<double>& values) override {
    for (double& v : values) v = (v + v * slower_) / 2;
  }
  std::uint64_t sum_over_processes(std::uint64_t value) override { return value; }
  [[noreturn]] void abort_all(const std::string& why, int) override { throw std::runtime_error("abort_all: " + why); }

 private:
  double slower_;
};

}  // namespace interprobe::collective::testing
