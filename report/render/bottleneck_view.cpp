// The `bottlenecks` section: a verdict block (what limits the machine per workload, the lever,
// how sure, what was not measured) that comes first, and per workload the modeled step per batch
// split into categories, each with how its number was obtained.
#include <fmt/format.h>

#include "common/units.hpp"
#include "report/render/document.hpp"

namespace interprobe::render {

namespace {

using report::StepCategory;

const char* short_name(StepCategory c) {
  switch (c) {
    case StepCategory::communication_latency: return "comm latency";
    case StepCategory::communication_bandwidth: return "comm bandwidth";
    case StepCategory::gemm_memory_bound: return "GEMM memory";
    case StepCategory::gemm_compute_bound: return "GEMM compute";
    case StepCategory::cache_reads: return "KV reads";
    case StepCategory::launch_overhead: return "launches";
  }
  return "?";
}


// "1.23 ms (interpolated)"; a measured number needs no label, every other one carries it.
std::string timed(const std::optional<double>& us, report::Provenance p) {
  if (!us) return "not measured";
  std::string value = *us >= 1000 ? fmt::format("{:.2f} ms", *us / 1e3) : fmt::format("{:.1f} us", *us);
  return p == report::Provenance::measured ? value : value + " (" + to_string(p) + ")";
}

Table batch_table(const report::WorkloadEstimate& w) {
  Table t;
  t.caption = fmt::format("{} at TP {}, context {} tokens: modeled decode step per batch on one rank", w.model, w.tp,
                          w.context_tokens);
  t.header = {"batch"};
  if (!w.batches.empty())
    for (const auto& c : w.batches.front().categories) t.header.push_back(short_name(c.category));
  for (const char* h : {"step", "tokens/s", "bottleneck", "observed", "unexplained"}) t.header.push_back(h);
  t.align.assign(t.header.size(), Align::right);
  t.align[t.header.size() - 3] = Align::left;
  for (const auto& b : w.batches) {
    std::vector<Cell> row{std::to_string(b.batch)};
    for (const auto& c : b.categories)
      row.push_back(Cell(timed(c.time_us, c.provenance), c.time_us ? (b.bottleneck == c.category ? Tone::warn : Tone::plain) : Tone::dim));
    row.push_back(timed(b.modeled_step_us, b.provenance));
    row.push_back(format_significant(b.tokens_per_s));
    row.push_back(b.bottleneck ? Cell(fmt::format("{} {:.0f}%", short_name(*b.bottleneck), 100 * b.bottleneck_fraction.value_or(0)))
                               : Cell("not ranked", Tone::dim));
    row.push_back(b.observed_step_us ? Cell(timed(*b.observed_step_us, report::Provenance::measured)) : Cell("-", Tone::dim));
    row.push_back(b.residual_us ? Cell(fmt::format("{:.0f}%", 100 * *b.residual_us / *b.observed_step_us),
                                       *b.residual_us > 0.5 * *b.observed_step_us ? Tone::warn : Tone::plain)
                                : Cell("-", Tone::dim));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table what_if_table(const report::WorkloadEstimate& w) {
  Table t;
  t.caption = "what if (from the same curves; upper bounds where a cost is removed entirely)";
  t.header = {"batch", "change", "tokens/s", "gain", "how", "note"};
  t.align = {Align::right, Align::left, Align::right, Align::right, Align::left, Align::left};
  for (const auto& wi : w.what_ifs)
    t.rows.push_back({std::to_string(wi.batch), wi.change,
                      wi.tokens_per_s ? Cell(format_significant(*wi.tokens_per_s)) : Cell("-", Tone::dim),
                      wi.gain_fraction ? Cell(fmt::format("{:+.0f}%", 100 * *wi.gain_fraction)) : Cell("-", Tone::dim),
                      Cell(to_string(wi.provenance), Tone::dim), Cell(wi.note, Tone::dim)});
  return t;
}

}  // namespace

void add_verdict_view(const report::Report& r, Document& doc) {
  if (!r.bottlenecks || r.bottlenecks->workloads.empty()) return;
  Section s{"verdict", {}};
  for (const auto& w : r.bottlenecks->workloads) {
    KeyValues kv;
    kv.add("workload", fmt::format("{} ({}, {}), TP {}", w.model, w.model_type, w.weight_dtype, w.tp));
    kv.add("verdict", w.verdict);
    if (w.lever) kv.add("lever", *w.lever);
    kv.add("confidence", Cell(fmt::format("{}: {}", to_string(w.confidence), w.confidence_reason), confidence_tone(w.confidence)));
    for (const auto& n : w.not_priced) kv.add("not measured", Cell(n, Tone::dim));
    if (w.observed) kv.add("telemetry", *w.observed);
    s.blocks.push_back(std::move(kv));
  }
  doc.sections.push_back(std::move(s));
}

void add_bottleneck_view(const report::Report& r, Document& doc) {
  if (!r.bottlenecks) return;
  Section s{"bottlenecks", {}};
  KeyValues sources;
  for (const auto& src : r.bottlenecks->sources) sources.add("priced from", src);
  if (r.bottlenecks->sources.empty()) sources.add("priced from", Cell("nothing measured in this report", Tone::warn));
  s.blocks.push_back(std::move(sources));
  for (const auto& w : r.bottlenecks->workloads) {
    if (!w.batches.empty()) s.blocks.push_back(batch_table(w));
    if (!w.what_ifs.empty()) s.blocks.push_back(what_if_table(w));
    for (auto& t : layout_tables(w)) s.blocks.push_back(std::move(t));
    KeyValues kv;
    kv.add("config", w.config);
    if (!w.batches.empty()) {
      const auto& c = w.batches.front().counts;
      kv.add("per step at batch " + std::to_string(w.batches.front().batch),
             fmt::format("{:.2f} GB of weights read, {} all-reduces of {} B, ~{} kernels", c.weight_bytes / 1e9, c.all_reduces,
                         c.all_reduce_bytes, c.kernels_estimated));
    }
    if (w.gemm_overtakes_communication_at_batch)
      kv.add("GEMMs overtake communication", fmt::format("at batch {}", *w.gemm_overtakes_communication_at_batch));
    for (const auto& n : w.notes) kv.add("note", Cell(n, Tone::dim));
    s.blocks.push_back(std::move(kv));
  }
  doc.sections.push_back(std::move(s));
}

}  // namespace interprobe::render
