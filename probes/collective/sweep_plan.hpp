#pragma once
// What an all-reduce sweep measures and how: sizes, element types, placements, iterations.
// Built from command-line options (bad input -> InputError naming the option); every rank of
// an MPI job must hold the same plan, which digest_text() lets them compare.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/collective/dtype.hpp"
#include "model/collective.hpp"
#include "common/size_plan.hpp"

namespace interprobe::collective {

struct SweepPlan {
  std::vector<std::uint64_t> sizes_bytes;  // ascending, unique
  std::vector<Dtype> dtypes = {Dtype::float32};
  bool out_of_place = true;
  bool in_place = true;
  int iterations = 20;         // all-reduces per timed sample (nccl-tests: 20)
  int samples = 5;             // timed samples per size and placement
  int warmup_iterations = 5;   // per size, over every size before any is timed
  double budget_s = 0.5;       // per size and placement: fewer iterations when one is slow
  double timeout_s = 60;       // watchdog per size (NCCL)
};

// "float,half" -> types; InputError naming --dtype.
std::vector<Dtype> parse_dtype_list(std::string_view text);
// "both" | "out-of-place" | "in-place"; InputError naming --placement.
void parse_placement(std::string_view text, SweepPlan& plan);

// Throws InputError when the plan cannot run with these element types: a size smaller than one
// element, no sizes, non-positive counts.
void validate_plan(const SweepPlan& plan);

// Elements per rank for `bytes` of `dtype` (bytes rounded down to whole elements).
std::uint64_t element_count(std::uint64_t bytes, Dtype dtype);

// Canonical text of everything that decides which collectives a rank calls. Ranks compare it
// before the first collective: a mismatch is an error on every rank, not a hang.
std::string digest_text(const SweepPlan& plan, report::AllreduceBackend backend,
                        const std::vector<report::AllreduceVariant>& variants);

// The sizes as --sizes text ("8,16,32"), for re-running a plan in a child process.
std::string sizes_text(const std::vector<std::uint64_t>& sizes);

}  // namespace interprobe::collective
