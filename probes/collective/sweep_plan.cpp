#include "probes/collective/sweep_plan.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/text.hpp"
#include "common/units.hpp"

namespace interprobe::collective {

std::vector<Dtype> parse_dtype_list(std::string_view text) {
  std::vector<Dtype> dtypes;
  for (const auto& item : split(text, ',')) {
    auto name = to_lower(trim(item));
    auto d = dtype_from(name);
    if (!d) throw InputError(fmt::format("--dtype '{}': unknown type; use float, half or bfloat16 (comma-separated)", name));
    if (std::find(dtypes.begin(), dtypes.end(), *d) == dtypes.end()) dtypes.push_back(*d);
  }
  if (dtypes.empty()) throw InputError("--dtype: no type given; use float, half or bfloat16");
  return dtypes;
}

void parse_placement(std::string_view text, SweepPlan& plan) {
  if (text == "both") {
    plan.out_of_place = plan.in_place = true;
  } else if (text == "out-of-place") {
    plan.out_of_place = true;
    plan.in_place = false;
  } else if (text == "in-place") {
    plan.out_of_place = false;
    plan.in_place = true;
  } else {
    throw InputError(fmt::format("--placement '{}': use both, out-of-place or in-place", std::string(text)));
  }
}

std::uint64_t element_count(std::uint64_t bytes, Dtype dtype) { return bytes / element_bytes(dtype); }

namespace {
constexpr double kMaxSecondsOption = 86400;
}  // namespace

void validate_plan(const SweepPlan& plan) {
  if (plan.sizes_bytes.empty()) throw InputError("no sizes to measure; give --min/--max or --sizes");
  if (plan.dtypes.empty()) throw InputError("--dtype: no type given; use float, half or bfloat16");
  for (auto d : plan.dtypes) {
    if (plan.sizes_bytes.front() < element_bytes(d))
      throw InputError(fmt::format("size {} B is smaller than one {} element ({} bytes); raise --min or the smallest --sizes entry",
                                   plan.sizes_bytes.front(), to_string(d), element_bytes(d)));
  }
  if (!plan.out_of_place && !plan.in_place) throw InputError("--placement: nothing to measure");
  if (plan.iterations < 1) throw InputError(fmt::format("--iters {}: give at least 1", plan.iterations));
  if (plan.samples < 1) throw InputError(fmt::format("--samples {}: give at least 1", plan.samples));
  if (plan.warmup_iterations < 0) throw InputError(fmt::format("--warmup {}: give 0 or more", plan.warmup_iterations));
  // NaN compares false both ways and a day is more than any size may take: both bounds explicit.
  if (!(plan.timeout_s > 0 && plan.timeout_s <= kMaxSecondsOption))
    throw InputError(fmt::format("--timeout {}: give a number of seconds above 0 and at most {}", plan.timeout_s, kMaxSecondsOption));
  if (!(plan.budget_s >= 0 && plan.budget_s <= kMaxSecondsOption))
    throw InputError(fmt::format("--budget {}: give 0 (no limit) or seconds, at most {}", plan.budget_s, kMaxSecondsOption));
}

std::string sizes_text(const std::vector<std::uint64_t>& sizes) {
  std::string out;
  for (auto s : sizes) out += fmt::format("{}{}", out.empty() ? "" : ",", s);
  return out;
}

std::string digest_text(const SweepPlan& plan, report::AllreduceBackend backend,
                        const std::vector<report::AllreduceVariant>& variants) {
  std::string dtypes, variant_list;
  for (auto d : plan.dtypes) dtypes += fmt::format("{}{}", dtypes.empty() ? "" : ",", to_string(d));
  for (auto v : variants) variant_list += fmt::format("{}{}", variant_list.empty() ? "" : ",", to_string(v));
  return fmt::format("backend={} variants={} dtypes={} placement={}{} iters={} samples={} warmup={} budget_s={} timeout_s={} sizes={}",
                     to_string(backend), variant_list, dtypes, plan.out_of_place ? "out" : "", plan.in_place ? "in" : "",
                     plan.iterations, plan.samples, plan.warmup_iterations, plan.budget_s, plan.timeout_s,
                     sizes_text(plan.sizes_bytes));
}

}  // namespace interprobe::collective
