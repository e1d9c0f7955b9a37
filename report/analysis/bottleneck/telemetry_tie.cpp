// The telemetry classes against the ranking's first category. Which categories each class stands
// for follows the rules' meaning (docs/reference.md §11): interconnect-bound is link traffic;
// small-kernel/launch-bound is busy GPUs with idle SMs (kernel launches, or NCCL's small
// all-reduces waiting on each other); memory-bound is DRAM, as weight and cache reads are;
// compute-bound is tensor work.
#include "report/analysis/bottleneck/telemetry_tie.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace interprobe::bottleneck {

namespace {

using report::StepCategory;
using report::TelemetryClass;

bool is_communication(StepCategory c) {
  return c == StepCategory::communication_latency || c == StepCategory::communication_bandwidth;
}

// The categories a class points to (empty: a class that says the GPU step was not the limit).
std::vector<StepCategory> categories_of(TelemetryClass c) {
  switch (c) {
    case TelemetryClass::interconnect_bound: return {StepCategory::communication_bandwidth, StepCategory::communication_latency};
    case TelemetryClass::small_kernel_launch_bound:
    case TelemetryClass::latency_occupancy_bound: return {StepCategory::launch_overhead, StepCategory::communication_latency};
    case TelemetryClass::memory_bound: return {StepCategory::gemm_memory_bound, StepCategory::cache_reads};
    case TelemetryClass::compute_bound: return {StepCategory::gemm_compute_bound};
    default: return {};
  }
}

// "8 GPUs undecided", "GPU 0 memory_bound, GPU 1 idle": the classes of the whole-run windows.
std::string classes_text(const std::map<TelemetryClass, std::vector<std::int64_t>>& by_class) {
  std::string out;
  for (const auto& [c, gpus] : by_class) {
    std::string who = gpus.size() == 1 ? fmt::format("GPU {}", gpus[0]) : fmt::format("{} GPUs", gpus.size());
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", who, to_string(c));
  }
  return out;
}

std::string relation(TelemetryClass c, const report::TelemetryWindow& w, StepCategory first) {
  const std::string cat = to_string(first);
  switch (c) {
    case TelemetryClass::thermal_limited:
    case TelemetryClass::power_capped:
      return fmt::format("the GPUs ran below their clocks, so serving is slower than the measured curves the ranking ({} first) "
                         "prices; lift the limit before pulling the lever",
                         cat);
    case TelemetryClass::idle:
    case TelemetryClass::host_starved:
      return fmt::format("the GPUs were not the limit while observed; the ranking ({} first) prices only the GPU step: look at "
                         "the host side (scheduler, batching, tokenization) first",
                         cat);
    case TelemetryClass::undecided: {
      bool comm = std::find(w.candidates.begin(), w.candidates.end(), "communication/synchronization") != w.candidates.end();
      bool launch = std::find(w.candidates.begin(), w.candidates.end(), "small-kernel/launch-bound") != w.candidates.end();
      if ((comm && is_communication(first)) || (launch && first == StepCategory::launch_overhead))
        return fmt::format("the ranking's {} picks {} among them; {} would confirm it", cat,
                           is_communication(first) ? "communication/synchronization" : "small-kernel/launch-bound",
                           w.decide_with.value_or("GPM activity"));
      return fmt::format("the ranking puts {} first, which the candidates do not name; {} would decide", cat,
                         w.decide_with.value_or("a longer observation"));
    }
    default: {
      auto cats = categories_of(c);
      if (std::find(cats.begin(), cats.end(), first) != cats.end())
        return fmt::format("consistent with the ranking, which puts {} first", cat);
      return fmt::format("not what the ranking expects ({} first): the served step differs from the model's (batch, "
                         "context, kernels) or another job shares the GPUs",
                         cat);
    }
  }
}

}  // namespace

std::optional<std::string> tie_telemetry(const report::TelemetrySection& t, const report::WorkloadEstimate& w) {
  if (t.gpus.empty()) return std::nullopt;
  std::map<TelemetryClass, std::vector<std::int64_t>> by_class;
  for (const auto& g : t.gpus) by_class[g.overall.classification].push_back(g.index);
  // The class most GPUs share (ties: the first in the vocabulary's order), with one of its windows.
  auto most = std::max_element(by_class.begin(), by_class.end(), [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  const report::TelemetryWindow* window = nullptr;
  for (const auto& g : t.gpus)
    if (g.overall.classification == most->first && !window) window = &g.overall;
  std::string observed = "observed: " + classes_text(by_class);
  if (most->first == TelemetryClass::undecided && !window->candidates.empty()) {
    std::string could;
    for (const auto& x : window->candidates) could += (could.empty() ? "" : " or ") + x;
    observed += " (could be " + could + ")";
  }
  const report::BatchEstimate* batch = nullptr;
  for (const auto& b : w.batches)
    if (b.bottleneck && !batch) batch = &b;
  if (!batch)
    return observed + "; the ranking names no first category (communication or GEMMs not priced: `interprobe run --model "
                      "CONFIG` measures them and ties its own telemetry baseline the same way)";
  return fmt::format("{}; at batch {} {}", observed, batch->batch, relation(most->first, *window, *batch->bottleneck));
}

std::optional<std::string> busy_at_partial_power(const report::TelemetrySection& t) {
  std::size_t busy = 0;
  double utilization = 0, power = 0;
  for (const auto& g : t.gpus) {
    const auto& a = g.overall.averages;
    if (!a.utilization_fraction || !a.power_limit_fraction) continue;
    if (*a.utilization_fraction < 0.9 || *a.power_limit_fraction > 0.7) continue;
    ++busy;
    utilization += *a.utilization_fraction;
    power += *a.power_limit_fraction;
  }
  if (busy == 0 || 2 * busy <= t.gpus.size()) return std::nullopt;
  double n = static_cast<double>(busy);
  return fmt::format("observed while serving: {} of {} GPUs {:.0f}% utilized at {:.0f}% of their power limit, busy "
                     "without being loaded: the step waits on small kernels, launches and all-reduces (latency- or "
                     "launch-bound), it does not stream weights at full bandwidth",
                     busy, t.gpus.size(), 100 * utilization / n, 100 * power / n);
}

void join_telemetry(const report::TelemetrySection& t, report::WorkloadEstimate& w) {
  w.observed = tie_telemetry(t, w);
  if (auto busy = busy_at_partial_power(t)) w.verdict += "; " + *busy;
}

}  // namespace interprobe::bottleneck
