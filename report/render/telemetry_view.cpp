// The `telemetry` section: per GPU the whole run's class with the rule's numbers (and for
// `undecided` what would decide it), then one table of windows with the averages the rules read.
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/render/document.hpp"

namespace interprobe::render {

namespace {

std::string fraction(const std::optional<double>& f) { return f ? fmt::format("{:.2f}", *f) : "-"; }

Cell class_cell(const report::TelemetryWindow& w) {
  using C = report::TelemetryClass;
  Tone tone = w.classification == C::undecided ? Tone::warn
              : (w.classification == C::thermal_limited || w.classification == C::power_capped) ? Tone::bad
              : w.classification == C::idle ? Tone::dim : Tone::plain;
  return {to_string(w.classification), tone};
}

KeyValues gpu_block(const report::TelemetryGpu& g) {
  KeyValues kv;
  const auto& w = g.overall;
  kv.add("class", class_cell(w));
  kv.add("rule", w.rule + ": " + w.reason);
  if (!w.candidates.empty()) {
    std::string c;
    for (const auto& x : w.candidates) c += (c.empty() ? "" : " or ") + x;
    kv.add("could be", Cell(c, Tone::warn));
  }
  if (w.decide_with) kv.add("decide with", *w.decide_with);
  if (g.gpm_reason) kv.add("GPM", Cell("absent: " + *g.gpm_reason, Tone::dim));
  for (const auto& u : g.unsupported) kv.add("unsupported", Cell(u, Tone::dim));
  return kv;
}

Table windows_table(const report::TelemetryGpu& g) {
  Table t;
  t.caption = fmt::format("GPU {} windows: averages (fractions of limit/max/capacity; GPM columns '-' when not sampled)", g.index);
  t.header = {"from s", "to s", "util", "power W", "of limit", "SM clk", "cap", "thermal", "PCIe GB/s", "NVLink GB/s",
              "SM act", "tensor", "DRAM", "class"};
  t.align = std::vector<Align>(t.header.size(), Align::right);
  t.align.back() = Align::left;
  for (const auto& w : g.windows) {
    const auto& a = w.averages;
    t.rows.push_back({Cell(fmt::format("{:.1f}", w.start_s)), Cell(fmt::format("{:.1f}", w.end_s)), Cell(fraction(a.utilization_fraction)),
                      Cell(a.power_w ? fmt::format("{:.0f}", *a.power_w) : "-"), Cell(fraction(a.power_limit_fraction)),
                      Cell(fraction(a.sm_clock_fraction)), Cell(fraction(a.power_cap_sample_fraction)),
                      Cell(fraction(a.thermal_sample_fraction)), Cell(a.pcie_gbps ? fmt::format("{:.4f}", *a.pcie_gbps) : "-"),
                      Cell(a.nvlink_gbps ? fmt::format("{:.2f}", *a.nvlink_gbps) : "-"), Cell(fraction(a.sm_active_fraction)),
                      Cell(fraction(a.tensor_active_fraction)), Cell(fraction(a.dram_active_fraction)), class_cell(w)});
  }
  return t;
}

// "0.31-0.55" over the values present, "0.31" when they agree; empty when none.
template <class Get>
std::string value_range(const std::vector<const report::TelemetryAverages*>& all, Get get, const char* spec) {
  std::optional<double> lo, hi;
  for (const auto* a : all)
    if (auto v = get(*a)) lo = std::min(lo.value_or(*v), *v), hi = std::max(hi.value_or(*v), *v);
  if (!lo) return "";
  auto one = [spec](double v) { return fmt::format(fmt::runtime(spec), v); };
  return one(*lo) == one(*hi) ? one(*lo) : one(*lo) + "-" + one(*hi);
}

}  // namespace

std::optional<Paragraph> measurement_telemetry_line(const std::vector<const report::MeasurementTelemetry*>& points, const char* what) {
  std::vector<const report::TelemetryAverages*> sampled;
  std::set<std::int64_t> gpus;
  std::optional<std::string> reason;
  std::size_t present = 0;
  for (const auto* p : points) {
    if (!p) continue;
    ++present;
    if (p->averages) sampled.push_back(&*p->averages);
    if (p->averages && p->gpu) gpus.insert(*p->gpu);
    if (!p->averages && !reason) reason = p->reason;
  }
  if (present == 0) return std::nullopt;
  if (sampled.empty()) return Paragraph{"telemetry: none (" + reason.value_or("not sampled") + ")", Tone::dim};
  using A = report::TelemetryAverages;
  std::vector<std::string> parts;
  auto add = [&](const char* label, std::string range, const char* unit) {
    if (!range.empty()) parts.push_back(fmt::format("{} {}{}", label, range, unit));
  };
  add("power", value_range(sampled, [](const A& a) { return a.power_limit_fraction; }, "{:.2f}"), " of limit");
  add("SM clock", value_range(sampled, [](const A& a) { return a.sm_clock_fraction; }, "{:.2f}"), " of max");
  add("SW power cap in", value_range(sampled, [](const A& a) { return a.power_cap_sample_fraction; }, "{:.2f}"), " of samples");
  add("thermal in", value_range(sampled, [](const A& a) { return a.thermal_sample_fraction; }, "{:.2f}"), " of samples");
  add("PCIe", value_range(sampled, [](const A& a) { return a.pcie_gbps; }, "{:.3g}"), " GB/s");
  add("NVLink", value_range(sampled, [](const A& a) { return a.nvlink_gbps; }, "{:.3g}"), " GB/s");
  add("GPM SM active", value_range(sampled, [](const A& a) { return a.sm_active_fraction; }, "{:.2f}"), "");
  add("DRAM", value_range(sampled, [](const A& a) { return a.dram_active_fraction; }, "{:.2f}"), "");
  add("tensor", value_range(sampled, [](const A& a) { return a.tensor_active_fraction; }, "{:.2f}"), "");
  std::string text = fmt::format("telemetry (busiest GPU {}; {} of {} {} sampled): {}", fmt::join(gpus, ", "), sampled.size(),
                                 present, what, fmt::join(parts, ", "));
  if (sampled.size() < present && reason) text += "; the others: " + *reason;
  return Paragraph{text, Tone::dim};
}

void add_telemetry_view(const report::Report& r, Document& doc) {
  if (!r.telemetry) return;
  const auto& s = *r.telemetry;
  for (const auto& g : s.gpus) {
    Section sec;
    sec.title = fmt::format("Telemetry: GPU {}{} ({}{}, {:.1f} s at {:.0f} ms)", g.index, g.name ? " " + *g.name : "",
                            to_string(s.source), s.trace ? " " + *s.trace : "", s.duration_s, 1000 * s.interval_s);
    sec.blocks.emplace_back(gpu_block(g));
    sec.blocks.emplace_back(windows_table(g));
    doc.sections.push_back(std::move(sec));
  }
  if (!s.gpus.empty())
    doc.sections.back().blocks.emplace_back(
        Paragraph{"NVML utilization is the share of time any kernel ran (NCCL's busy-waiting kernels included): the class "
                  "never rests on utilization and power alone; compute-, memory-, launch- and latency-bound need GPM activity",
                  Tone::dim});
}

}  // namespace interprobe::render
