// analyze's layout what-if of a MoE workload (report::LayoutOption), as two tables.
#include <algorithm>

#include <fmt/format.h>

#include "common/units.hpp"
#include "report/render/document.hpp"

namespace interprobe::render {

namespace {

std::string gb(double bytes) { return fmt::format("{:.1f} GB", bytes / 1e9); }

Cell ms_cell(const std::optional<double>& us) { return us ? Cell(fmt::format("{:.2f}", *us / 1e3)) : Cell("-", Tone::dim); }

Cell fit_cell(const report::LayoutOption& o) {
  if (o.over_by_bytes) return {fmt::format("no: {} over", gb(*o.over_by_bytes)), Tone::bad};
  if (!o.gpu_memory_bytes) return {"memory unknown", Tone::dim};
  return {fmt::format("yes ({} usable)", gb(0.9 * *o.gpu_memory_bytes)), Tone::good};
}

}  // namespace

std::vector<Table> layout_tables(const report::WorkloadEstimate& w) {
  if (w.layouts.empty()) return {};
  Table t;
  t.caption = "layout what-if: memory per GPU (weights + KV cache at the batch and context, against 90% of the GPU's memory), "
              "the step's reads (weights and KV one GPU reads; under EP the GPU that drew the most touched experts) plus its "
              "collectives, not overlapped; GEMM compute and launches "
              "are left out, the same in every layout";
  t.header = {"batch", "layout", "weights/GPU", "KV/GPU", "fits", "reads ms", "comm ms", "step ms", "tokens/s", "limited by", "how"};
  t.align = {Align::right, Align::left, Align::right, Align::right, Align::left, Align::right,
             Align::right, Align::right, Align::right, Align::left, Align::left};
  std::int64_t largest = 0;
  for (const auto& o : w.layouts) {
    largest = std::max(largest, o.batch);
    const bool fits = !o.over_by_bytes;
    t.rows.push_back({std::to_string(o.batch), o.name, gb(o.weight_bytes_per_gpu), gb(o.kv_bytes_per_gpu), fit_cell(o),
                      ms_cell(o.memory_read_us), ms_cell(o.communication_us), ms_cell(o.modeled_step_us),
                      o.modeled_step_us && fits ? Cell(format_significant(static_cast<double>(o.batch) / (*o.modeled_step_us / 1e6)))
                                                : Cell("-", Tone::dim),
                      Cell(o.limited_by, fits ? Tone::plain : Tone::bad), Cell(to_string(o.provenance), Tone::dim)});
  }
  Table c;
  c.caption = fmt::format("collectives each layout needs per step at batch {} (TP: all-reduce; EP: all-to-all dispatch and "
                          "combine, DeepEP's bytes: 16 + H + 4H/128 per token copy in FP8, 2H back in BF16)",
                          largest);
  c.header = {"layout", "for", "collective", "ranks", "size", "calls", "us each", "how"};
  c.align = {Align::left, Align::left, Align::left, Align::right, Align::right, Align::right, Align::right, Align::left};
  for (const auto& o : w.layouts) {
    if (o.batch != largest) continue;
    for (const auto& col : o.collectives)
      c.rows.push_back({o.name, col.purpose, col.collective, std::to_string(col.ranks), format_size_label(static_cast<std::uint64_t>(col.bytes)),
                        std::to_string(col.calls), col.us ? Cell(format_us(*col.us)) : Cell("-", Tone::dim),
                        Cell(to_string(col.provenance), Tone::dim)});
  }
  return {std::move(t), std::move(c)};
}

}  // namespace interprobe::render
