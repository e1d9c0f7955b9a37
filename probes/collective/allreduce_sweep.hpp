#pragma once
// The sweep engine: warm-up over every size, then per size and placement a checked all-reduce
// and timed samples; each point goes into the report section as soon as it is measured.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "probes/collective/collective_backend.hpp"
#include "probes/collective/sweep_plan.hpp"
#include "probes/runner/measurement_windows.hpp"
#include "model/collective.hpp"

namespace interprobe::collective {

// Input values: small integers, different per rank and element, chosen so every partial sum
// of every order of reduction is an exact integer in the type (at most exact_integer_limit).
// `salt` changes per size and placement so a stale buffer of an earlier size does not pass.
std::uint32_t pattern_modulus(int ranks, Dtype dtype);
void fill_input(std::byte* out, std::size_t count, Dtype dtype, int rank, int ranks, std::uint32_t salt);
void fill_expected(std::byte* out, std::size_t count, Dtype dtype, int ranks, std::uint32_t salt);
// All bytes 0xFF: a NaN in float, half and bfloat16, never an exact sum.
void fill_sentinel(std::byte* out, std::size_t bytes);
// Elements of `actual` that differ bitwise from `expected`.
std::uint64_t count_mismatches(const std::byte* actual, const std::byte* expected, std::size_t count, Dtype dtype);

// busbw = algbw x 2(n-1)/n (nccl-tests' all-reduce bus bandwidth).
double busbw_factor(int ranks);
report::AllreduceSummary summarize_sweep(const std::vector<report::AllreducePoint>& points);

struct SweepObserver {
  std::function<void(const std::string&)> progress;   // "float 64M in-place"
  std::function<void()> point_added;                 // after each point (checkpoint)
  const MeasurementWindows* windows = nullptr;        // telemetry beside each size's timed samples
};

// Runs `plan` for one element type on `backend`, appending points to `out` and setting its
// summary. Throws CollectiveHang (after the backend aborted), InterruptedError, or the
// backend's errors; `out` keeps what was measured.
void run_allreduce_sweep(CollectiveBackend& backend, const SweepPlan& plan, Dtype dtype, report::AllreduceSweep& out,
                         const SweepObserver& observer = {});
// The same for any collective (collective_ops.hpp): the plan's sizes are what algbw divides, as
// nccl-tests' size column; alltoall and sendrecv run out of place only.
void run_collective_sweep(CollectiveBackend& backend, const SweepPlan& plan, report::CollectiveOp op, Dtype dtype,
                          report::AllreduceSweep& out, const SweepObserver& observer = {});

}  // namespace interprobe::collective
