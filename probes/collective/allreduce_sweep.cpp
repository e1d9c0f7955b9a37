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

void run_collective_sweep(CollectiveBackend& backend, const SweepPlan& plan, report::CollectiveOp op, Dtype dtype,
                          report::AllreduceSweep& out, const SweepObserver& observer) {
  const int ranks = backend.ranks();
  const std::size_t width = element_bytes(dtype);
  std::vector<std::uint64_t> counts;  // per rank, nccl-tests' count column
  for (auto size : plan.sizes_bytes) {
    const std::uint64_t count = op_count(op, size, dtype, ranks);
    if (counts.empty() || counts.back() != count) counts.push_back(count);  // sizes below n elements collapse
  }
  std::size_t max_bytes = 0;
  for (auto count : counts)
    max_bytes = std::max<std::size_t>(max_bytes, std::max(send_elements(op, count, ranks), recv_elements(op, count, ranks)) * width);
  backend.allocate(max_bytes);
  auto deadline_for_size = [&] {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(plan.timeout_s));
  };
  auto say = [&](const std::string& line) {
    if (observer.progress) observer.progress(line);
  };
  auto size_of = [&](std::uint64_t count) { return algbw_bytes(op, count, dtype, ranks); };

  // Warm-up over every size first (connections, caches, clocks). Its times let slow sizes get
  // fewer iterations; every decision uses the slowest rank's time, so all ranks make the same
  // number of calls. The warm-up of a size spends at most a quarter of the budget.
  std::vector<double> warm_us(counts.size(), 0.0);
  say(fmt::format("{} connecting", to_string(dtype)));
  backend.log_choices(true);  // the untimed connection and warm-up record what the library chose
  backend.start(op, counts.front(), dtype, false);  // the first call sets up connections: not a size's time
  backend.synchronize(deadline_for_size(), size_of(counts.front()));
  for (std::size_t i = 0; i < counts.size(); ++i) {
    throw_if_interrupted();
    const std::uint64_t bytes = size_of(counts[i]);
    say(fmt::format("{} warm-up {}", to_string(dtype), format_size_label(bytes)));
    const auto deadline = deadline_for_size();
    Stopwatch first_clock;
    backend.start(op, counts[i], dtype, false);
    backend.synchronize(deadline, bytes);
    std::vector<double> first_us = {first_clock.elapsed_us()};
    backend.group().max_over_processes(first_us);
    int more = std::max(0, plan.warmup_iterations - 1);
    if (plan.budget_s > 0 && first_us[0] > 0)
      more = static_cast<int>(std::min<double>(more, std::floor(plan.budget_s * 0.25e6 / first_us[0])));
    Stopwatch clock;
    for (int w = 0; w < more; ++w) backend.start(op, counts[i], dtype, false);
    backend.synchronize(deadline, bytes);
    warm_us[i] = more > 0 ? clock.elapsed_us() / more : first_us[0];
  }
  backend.group().max_over_processes(warm_us);
  backend.log_choices(false);
  std::vector<std::byte> staging(max_bytes), expected(max_bytes);
  std::uint32_t salt = 1;
  const double factor = busbw_factor(op, ranks);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const std::uint64_t count = counts[i];
    const std::uint64_t bytes = size_of(count);
    for (bool in_place : {false, true}) {
      if ((in_place && !plan.in_place) || (!in_place && !plan.out_of_place)) continue;
      if (in_place && !has_in_place(op)) continue;
      throw_if_interrupted();
      say(fmt::format("{} {} {}", to_string(dtype), format_size_label(bytes), in_place ? "in-place" : "out-of-place"));
      const auto deadline = deadline_for_size();
      ++salt;
      // The check: fresh inputs, the output poisoned, compare with the exact result. Out of place
      // the timed calls leave the inputs alone, so their last result is checked; in place each
      // one works on the previous result, so one call on fresh inputs is checked first.
      auto check = prepare_check(backend, op, count, dtype, in_place, salt, staging, expected);
      std::uint64_t wrong = 0;
      if (in_place) {
        backend.start(op, count, dtype, true);
        backend.synchronize(deadline, bytes);
        wrong = check();
      }

      int iterations = plan.iterations;
      if (plan.budget_s > 0 && warm_us[i] > 0) {
        const double fit = plan.budget_s * 1e6 / (warm_us[i] * plan.samples);
        iterations = static_cast<int>(std::clamp(std::floor(fit), 1.0, static_cast<double>(plan.iterations)));
      }
      // Samples until --samples, or past the budget after two: whether to go on is agreed
      // (slowest rank's elapsed time) so every rank takes as many.
      std::vector<double> sample_us;
      Stopwatch size_clock;
      SpanLog span;
      span.begin();
      for (int s = 0; s < plan.samples; ++s) {
        throw_if_interrupted();
        backend.group().barrier();
        Stopwatch clock;
        for (int it = 0; it < iterations; ++it) backend.start(op, count, dtype, in_place);
        backend.synchronize(deadline, bytes);
        sample_us.push_back(clock.elapsed_us() / iterations);
        if (plan.budget_s > 0 && s >= 1 && s + 1 < plan.samples) {
          std::vector<double> elapsed_s = {size_clock.elapsed_s()};
          backend.group().max_over_processes(elapsed_s);
          if (elapsed_s[0] >= plan.budget_s) break;
        }
      }
      span.end();
      if (!in_place) wrong = check();
      std::vector<double> mean_us = sample_us;
      backend.group().mean_over_processes(mean_us);
      backend.group().max_over_processes(sample_us);
      const SampleStats stats = summarize(sample_us);
      const double mean_median_us = summarize(mean_us).median;

      report::AllreducePoint p;
      p.bytes = static_cast<std::int64_t>(bytes);
      p.elements_per_rank = static_cast<std::int64_t>(count);
      p.dtype = dtype;
      p.in_place = in_place;
      p.iterations = iterations;
      p.samples = static_cast<std::int64_t>(stats.samples);
      p.time_us = stats.median;
      p.min_us = stats.min;
      p.max_us = stats.max;
      p.algbw_gbps = stats.median > 0 ? static_cast<double>(bytes) / (stats.median * 1e3) : 0;
      p.busbw_gbps = p.algbw_gbps * factor;
      p.rank_mean_time_us = mean_median_us;
      p.rank_mean_busbw_gbps = mean_median_us > 0 ? static_cast<double>(bytes) / (mean_median_us * 1e3) * factor : 0;
      p.wrong_elements = static_cast<std::int64_t>(wrong);
      p.telemetry = summarize_spans(observer.windows, span);
      out.points.push_back(p);
      out.summary = summarize_sweep(out.points);
      if (observer.point_added) observer.point_added();
    }
  }
  out.summary = summarize_sweep(out.points);
}

}  // namespace interprobe::collective
