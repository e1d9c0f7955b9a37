#include "probes/collective/allreduce_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "common/interrupt.hpp"
#include "common/statistics.hpp"
#include "common/stopwatch.hpp"
#include "common/units.hpp"
#include "probes/collective/collective_ops.hpp"

namespace interprobe::collective {

namespace {

// Ranks whose input is not all zero: beyond the exact-integer limit the others send zeros.
std::uint32_t contributing_ranks(int ranks, Dtype dtype) {
  return static_cast<std::uint32_t>(std::min<std::int64_t>(ranks, exact_integer_limit(dtype)));
}

std::uint32_t input_value(int rank, std::size_t index, std::uint32_t modulus, std::uint32_t salt) {
  return static_cast<std::uint32_t>((3ull * static_cast<unsigned>(rank) + 7ull * index + salt) % modulus);
}

}  // namespace

std::uint32_t pattern_modulus(int ranks, Dtype dtype) {
  // Values 0..q with q * contributing ranks <= limit; q at most 255 keeps the table of sums small.
  const std::uint32_t limit = exact_integer_limit(dtype);
  const std::uint32_t per_rank = std::max<std::uint32_t>(1, std::min<std::uint32_t>(255, limit / contributing_ranks(ranks, dtype)));
  return per_rank + 1;
}

void fill_input(std::byte* out, std::size_t count, Dtype dtype, int rank, int ranks, std::uint32_t salt) {
  const std::size_t width = element_bytes(dtype);
  const bool contributes = static_cast<std::uint32_t>(rank) < contributing_ranks(ranks, dtype);
  const std::uint32_t modulus = pattern_modulus(ranks, dtype);
  if (!contributes) {
    std::memset(out, 0, count * width);  // +0.0 in all three types
    return;
  }
  std::vector<std::byte> encoded(modulus * width);  // each value's encoding, computed once
  for (std::uint32_t v = 0; v < modulus; ++v) encode_element(dtype, static_cast<float>(v), &encoded[v * width]);
  std::uint32_t value = input_value(rank, 0, modulus, salt);
  for (std::size_t i = 0; i < count; ++i) {
    std::memcpy(out + i * width, &encoded[value * width], width);
    value += 7;
    if (value >= modulus) value %= modulus;
  }
}

void fill_expected(std::byte* out, std::size_t count, Dtype dtype, int ranks, std::uint32_t salt) {
  const std::size_t width = element_bytes(dtype);
  const std::uint32_t modulus = pattern_modulus(ranks, dtype);
  const std::uint32_t contributors = contributing_ranks(ranks, dtype);
  // The sum over ranks depends only on (7i + salt) mod modulus: tabulate it once.
  std::vector<std::byte> table(modulus * width);
  for (std::uint32_t offset = 0; offset < modulus; ++offset) {
    std::uint64_t sum = 0;
    for (std::uint32_t r = 0; r < contributors; ++r) sum += (3ull * r + offset) % modulus;
    encode_element(dtype, static_cast<float>(sum), &table[offset * width]);
  }
  std::uint32_t offset = salt % modulus;
  for (std::size_t i = 0; i < count; ++i) {
    std::memcpy(out + i * width, &table[offset * width], width);
    offset += 7;
    if (offset >= modulus) offset %= modulus;
  }
}

void fill_sentinel(std::byte* out, std::size_t bytes) { std::memset(out, 0xff, bytes); }

std::uint64_t count_mismatches(const std::byte* actual, const std::byte* expected, std::size_t count, Dtype dtype) {
  const std::size_t width = element_bytes(dtype);
  if (std::memcmp(actual, expected, count * width) == 0) return 0;  // the common case, fast
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) wrong += std::memcmp(actual + i * width, expected + i * width, width) != 0;
  return wrong;
}

double busbw_factor(int ranks) { return ranks > 0 ? 2.0 * (ranks - 1) / ranks : 0.0; }

// Stored summaries follow the slowest rank, as they have since schema 1 (the renderers show the
// mean over ranks beside it: report::summarize_points).
report::AllreduceSummary summarize_sweep(const std::vector<report::AllreducePoint>& points) {
  return report::summarize_points(points, report::RankAggregate::slowest);
}

void run_allreduce_sweep(CollectiveBackend& backend, const SweepPlan& plan, Dtype dtype, report::AllreduceSweep& out,
                         const SweepObserver& observer) {
  run_collective_sweep(backend, plan, report::CollectiveOp::all_reduce, dtype, out, observer);
}

namespace {

// Writes fresh inputs (and a poisoned output) for one checked call of `op` on every local rank;
// returns the check to run after it: wrong elements summed over every rank of every process.
std::function<std::uint64_t()> prepare_check(CollectiveBackend& backend, report::CollectiveOp op, std::uint64_t count,
                                             Dtype dtype, bool in_place, std::uint32_t salt, std::vector<std::byte>& staging,
                                             std::vector<std::byte>& expected) {
  const int ranks = backend.ranks();
  const std::size_t width = element_bytes(dtype);
  const std::uint64_t bytes = count * width;
  if (op == report::CollectiveOp::all_reduce) {
    for (int local = 0; local < backend.local_ranks(); ++local) {
      fill_input(staging.data(), count, dtype, backend.rank() + local, ranks, salt);
      backend.write(in_place ? BufferRole::recv : BufferRole::send, local, staging.data(), bytes);
      if (!in_place) {
        fill_sentinel(staging.data(), bytes);
        backend.write(BufferRole::recv, local, staging.data(), bytes);
      }
    }
    fill_expected(expected.data(), count, dtype, ranks, salt);
    return [&backend, &expected, count, dtype] {
      return backend.group().sum_over_processes(backend.count_wrong(expected.data(), count, dtype));
    };
  }
  for (int local = 0; local < backend.local_ranks(); ++local) {
    const RankBuffers b = op_buffers(op, count, dtype, backend.rank() + local, ranks, salt, in_place,
                                     backend.in_place_result_offset(count, local));
    if (!b.send.empty()) backend.write(BufferRole::send, local, b.send.data(), b.send.size());
    backend.write(BufferRole::recv, local, b.recv.data(), b.recv.size());
  }
  // The expected data differs per rank: rebuilt at the check rather than held for every GPU.
  return [&backend, &staging, op, count, dtype, in_place, salt, width] {
    std::uint64_t wrong = 0;
    for (int local = 0; local < backend.local_ranks(); ++local) {
      const RankBuffers b = op_buffers(op, count, dtype, backend.rank() + local, backend.ranks(), salt, in_place,
                                       backend.in_place_result_offset(count, local));
      backend.read(BufferRole::recv, local, staging.data(), b.recv.size());
      wrong += count_mismatches(staging.data() + b.expected_offset_elements * width, b.expected.data(),
                                b.expected.size() / width, dtype);
    }
    return backend.group().sum_over_processes(wrong);
  };
}

}  // namespace

namespace {

// One sweep of one collective in one element type: the sizes it times, the warm-up that sets
// each size's iterations, then each size out of place and in place. Every decision that changes
// how many calls a rank makes uses figures agreed over the ranks (the slowest rank's).
class CollectiveSweepRun {
 public:
  CollectiveSweepRun(CollectiveBackend& backend, const SweepPlan& plan, report::CollectiveOp op, Dtype dtype,
                     const SweepObserver& observer)
      : backend_(backend), plan_(plan), op_(op), dtype_(dtype), observer_(observer), ranks_(backend.ranks()),
        factor_(busbw_factor(op, ranks_)) {
    for (auto size : plan.sizes_bytes) {
      const std::uint64_t count = op_count(op, size, dtype, ranks_);
      if (counts_.empty() || counts_.back() != count) counts_.push_back(count);  // sizes below n elements collapse
    }
    for (auto count : counts_)
      max_bytes_ = std::max<std::size_t>(
          max_bytes_, std::max(send_elements(op, count, ranks_), recv_elements(op, count, ranks_)) * element_bytes(dtype));
  }

  void run(report::AllreduceSweep& out) {
    backend_.allocate(max_bytes_);
    const std::vector<double> warm_us = warm_up();
    staging_.resize(max_bytes_);
    expected_.resize(max_bytes_);
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      for (bool in_place : {false, true}) {
        if ((in_place && !plan_.in_place) || (!in_place && !plan_.out_of_place)) continue;
        if (in_place && !has_in_place(op_)) continue;
        out.points.push_back(measure(counts_[i], in_place, warm_us[i]));
        out.summary = summarize_sweep(out.points);
        if (observer_.point_added) observer_.point_added();
      }
    }
    out.summary = summarize_sweep(out.points);
  }

 private:
  Clock::time_point deadline_for_size() const {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(plan_.timeout_s));
  }
  void say(const std::string& line) const {
    if (observer_.progress) observer_.progress(line);
  }
  std::uint64_t size_of(std::uint64_t count) const { return algbw_bytes(op_, count, dtype_, ranks_); }

  // Warm-up over every size first (connections, caches, clocks). Its times let slow sizes get
  // fewer iterations; every decision uses the slowest rank's time, so all ranks make the same
  // number of calls. The warm-up of a size spends at most a quarter of the budget.
  std::vector<double> warm_up() {
    std::vector<double> warm_us(counts_.size(), 0.0);
    say(fmt::format("{} connecting", to_string(dtype_)));
    backend_.log_choices(true);  // the untimed connection and warm-up record what the library chose
    backend_.start(op_, counts_.front(), dtype_, false);  // the first call sets up connections: not a size's time
    backend_.synchronize(deadline_for_size(), size_of(counts_.front()));
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      throw_if_interrupted();
      const std::uint64_t bytes = size_of(counts_[i]);
      say(fmt::format("{} warm-up {}", to_string(dtype_), format_size_label(bytes)));
      const auto deadline = deadline_for_size();
      Stopwatch first_clock;
      backend_.start(op_, counts_[i], dtype_, false);
      backend_.synchronize(deadline, bytes);
      std::vector<double> first_us = {first_clock.elapsed_us()};
      backend_.group().max_over_processes(first_us);
      int more = std::max(0, plan_.warmup_iterations - 1);
      if (plan_.budget_s > 0 && first_us[0] > 0)
        more = static_cast<int>(std::min<double>(more, std::floor(plan_.budget_s * 0.25e6 / first_us[0])));
      Stopwatch clock;
      for (int w = 0; w < more; ++w) backend_.start(op_, counts_[i], dtype_, false);
      backend_.synchronize(deadline, bytes);
      warm_us[i] = more > 0 ? clock.elapsed_us() / more : first_us[0];
    }
    backend_.group().max_over_processes(warm_us);
    backend_.log_choices(false);
    return warm_us;
  }

  int iterations_for(double warm_us) const {
    if (!(plan_.budget_s > 0 && warm_us > 0)) return plan_.iterations;
    const double fit = plan_.budget_s * 1e6 / (warm_us * plan_.samples);
    return static_cast<int>(std::clamp(std::floor(fit), 1.0, static_cast<double>(plan_.iterations)));
  }

  // Samples until --samples, or past the budget after two: whether to go on is agreed (slowest
  // rank's elapsed time) so every rank takes as many. Per-call microseconds of each sample.
  std::vector<double> timed_samples(std::uint64_t count, bool in_place, int iterations, Clock::time_point deadline) {
    const std::uint64_t bytes = size_of(count);
    std::vector<double> sample_us;
    Stopwatch size_clock;
    for (int s = 0; s < plan_.samples; ++s) {
      throw_if_interrupted();
      backend_.group().barrier();
      Stopwatch clock;
      for (int it = 0; it < iterations; ++it) backend_.start(op_, count, dtype_, in_place);
      backend_.synchronize(deadline, bytes);
      sample_us.push_back(clock.elapsed_us() / iterations);
      if (plan_.budget_s > 0 && s >= 1 && s + 1 < plan_.samples) {
        std::vector<double> elapsed_s = {size_clock.elapsed_s()};
        backend_.group().max_over_processes(elapsed_s);
        if (elapsed_s[0] >= plan_.budget_s) break;
      }
    }
    return sample_us;
  }

  report::AllreducePoint measure(std::uint64_t count, bool in_place, double warm_us) {
    const std::uint64_t bytes = size_of(count);
    throw_if_interrupted();
    say(fmt::format("{} {} {}", to_string(dtype_), format_size_label(bytes), in_place ? "in-place" : "out-of-place"));
    const auto deadline = deadline_for_size();
    ++salt_;
    // The check: fresh inputs, the output poisoned, compare with the exact result. Out of place
    // the timed calls leave the inputs alone, so their last result is checked; in place each
    // one works on the previous result, so one call on fresh inputs is checked first.
    auto check = prepare_check(backend_, op_, count, dtype_, in_place, salt_, staging_, expected_);
    std::uint64_t wrong = 0;
    if (in_place) {
      backend_.start(op_, count, dtype_, true);
      backend_.synchronize(deadline, bytes);
      wrong = check();
    }
    const int iterations = iterations_for(warm_us);
    SpanLog span;
    span.begin();
    std::vector<double> sample_us = timed_samples(count, in_place, iterations, deadline);
    span.end();
    if (!in_place) wrong = check();
    std::vector<double> mean_us = sample_us;
    backend_.group().mean_over_processes(mean_us);
    backend_.group().max_over_processes(sample_us);
    const SampleStats stats = summarize(sample_us);
    const double mean_median_us = summarize(mean_us).median;

    report::AllreducePoint p;
    p.bytes = static_cast<std::int64_t>(bytes);
    p.elements_per_rank = static_cast<std::int64_t>(count);
    p.dtype = dtype_;
    p.in_place = in_place;
    p.iterations = iterations;
    p.samples = static_cast<std::int64_t>(stats.samples);
    p.time_us = stats.median;
    p.min_us = stats.min;
    p.max_us = stats.max;
    p.algbw_gbps = stats.median > 0 ? static_cast<double>(bytes) / (stats.median * 1e3) : 0;
    p.busbw_gbps = p.algbw_gbps * factor_;
    p.rank_mean_time_us = mean_median_us;
    p.rank_mean_busbw_gbps = mean_median_us > 0 ? static_cast<double>(bytes) / (mean_median_us * 1e3) * factor_ : 0;
    p.wrong_elements = static_cast<std::int64_t>(wrong);
    p.telemetry = summarize_spans(observer_.windows, span);
    return p;
  }

  CollectiveBackend& backend_;
  const SweepPlan& plan_;
  const report::CollectiveOp op_;
  const Dtype dtype_;
  const SweepObserver& observer_;
  const int ranks_;
  const double factor_;
  std::vector<std::uint64_t> counts_;  // per rank, nccl-tests' count column
  std::size_t max_bytes_ = 0;
  std::vector<std::byte> staging_, expected_;
  std::uint32_t salt_ = 1;
};

}  // namespace

void run_collective_sweep(CollectiveBackend& backend, const SweepPlan& plan, report::CollectiveOp op, Dtype dtype,
                          report::AllreduceSweep& out, const SweepObserver& observer) {
  CollectiveSweepRun(backend, plan, op, dtype, observer).run(out);
}

}  // namespace interprobe::collective
