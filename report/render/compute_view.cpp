// The `compute` section: per engine, its identity and ceilings (memory read, launch floor,
// square-GEMM peak per dtype), then one table of GEMM points per dtype with the roofline bound.
#include <fmt/format.h>

#include "common/units.hpp"
#include "report/render/document.hpp"

namespace interprobe::render {

namespace {

std::string rate(double tflops) {
  // Host engines run at GFLOP/s, GPUs at hundreds of TFLOP/s: three significant digits either way.
  return tflops >= 1 ? fmt::format("{:.1f} TFLOP/s", tflops) : fmt::format("{:.1f} GFLOP/s", tflops * 1e3);
}

std::string percent(const std::optional<double>& f) { return f ? fmt::format("{:.0f}%", 100 * *f) : "-"; }

Cell status_of(const report::ComputeEngineResult& e) {
  if (e.status == report::EngineStatus::ok) return {"ok", Tone::good};
  std::string text = std::string(to_string(e.status)) + (e.reason ? ": " + *e.reason : "");
  return {text, e.status == report::EngineStatus::failed ? Tone::bad : Tone::warn};
}

Cell check_cell(const std::optional<report::GemmCheck>& c) {
  if (!c) return {"-", Tone::dim};
  if (c->passed) return {fmt::format("ok ({:.0e})", c->max_relative_error), Tone::good};
  return {fmt::format("WRONG ({:.1e} > {:.0e})", c->max_relative_error, c->tolerance), Tone::bad};
}

KeyValues engine_block(const report::ComputeEngineResult& e) {
  KeyValues kv;
  kv.add("status", status_of(e));
  if (e.library) kv.add("library", *e.library + (e.library_version ? " " + *e.library_version : ""));
  if (e.device) kv.add("device", *e.device);
  if (e.threads) kv.add("threads", std::to_string(*e.threads));
  if (e.simulated) kv.add("simulated", Cell("yes: " + *e.simulated + " (not a measurement of hardware)", Tone::warn));
  for (const auto& d : e.dtypes)
    kv.add(std::string("dtype ") + to_string(d.dtype), Cell(std::string(d.supported ? "yes" : "no") + (d.reason ? ": " + *d.reason : ""),
                                               d.supported ? Tone::plain : Tone::dim));
  for (const auto& m : e.memory)
    kv.add("memory read " + m.name,
           fmt::format("{} GB/s ({}, CV {:.1f}%)", format_gbps(m.gbps), format_bytes(static_cast<std::uint64_t>(m.bytes)),
                       100 * m.timing.cv_fraction));
  if (e.status == report::EngineStatus::ok || e.launch_floor_us)
    kv.add("launch floor", e.launch_floor_us ? Cell(fmt::format("{} us{}", format_us(*e.launch_floor_us),
                                                               e.launch_floor_graph_us
                                                                   ? fmt::format(" (in a CUDA graph: {} us)", format_us(*e.launch_floor_graph_us))
                                                                   : std::string()))
                                           : Cell("n/a: " + e.launch_floor_reason.value_or("not measured"), Tone::dim));
  for (const auto& p : e.peaks) {
    std::string published = p.published_tflops ? fmt::format("published {}", rate(*p.published_tflops))
                                                : "published: none (" + p.published_basis.value_or("unknown") + ")";
    kv.add(fmt::format("peak {} ({}^3)", to_string(p.dtype), p.size),
           Cell(fmt::format("{} measured; {}", rate(p.measured_tflops), published),
                p.check && !p.check->passed ? Tone::bad : Tone::plain));
  }
  for (const auto& n : e.notes) kv.add("note", Cell(n, Tone::dim));
  return kv;
}

Table points_table(const report::ComputeEngineResult& e, report::ComputeDtype dtype) {
  Table t;
  t.caption = fmt::format("{} {}: Y[MxN] = X[MxK] W^T, median time per GEMM; % of the measured peak and memory bandwidth",
                          to_string(e.engine), to_string(dtype));
  t.header = {"shape", "M", "N", "K", "time us", "CV", "rate", "flop/B", "weights GB/s", "% peak", "% mem bw", "bound", "check"};
  t.align = std::vector<Align>(t.header.size(), Align::right);
  t.align[0] = t.align[11] = t.align[12] = Align::left;
  for (const auto& p : e.points) {
    if (p.dtype != dtype) continue;
    t.rows.push_back({Cell(p.shape), Cell(std::to_string(p.m)), Cell(std::to_string(p.n)), Cell(std::to_string(p.k)),
                      Cell(format_us(p.timing.median_us)), Cell(fmt::format("{:.1f}%", 100 * p.timing.cv_fraction)),
                      Cell(rate(p.tflops)), Cell(fmt::format("{:.1f}", p.flop_per_byte)), Cell(format_gbps(p.weight_gbps)),
                      Cell(percent(p.peak_fraction)), Cell(percent(p.memory_bandwidth_fraction)),
                      Cell(p.bound ? to_string(*p.bound) : "-"), check_cell(p.check)});
  }
  return t;
}

}  // namespace

void add_compute_view(const report::Report& r, Document& doc) {
  if (!r.compute) return;
  for (const auto& e : r.compute->engines) {
    Section s;
    s.title = fmt::format("Compute: {} engine ({} plan)", to_string(e.engine), to_string(r.compute->plan));
    s.blocks.emplace_back(engine_block(e));
    for (const auto& entry : names(report::ComputeDtype{})) {
      Table t = points_table(e, entry.value);
      if (!t.rows.empty()) s.blocks.emplace_back(std::move(t));
    }
    std::vector<const report::MeasurementTelemetry*> telemetry;
    for (const auto& p : e.peaks) telemetry.push_back(p.telemetry ? &*p.telemetry : nullptr);
    for (const auto& p : e.points) telemetry.push_back(p.telemetry ? &*p.telemetry : nullptr);
    if (auto line = measurement_telemetry_line(telemetry, "GEMMs")) s.blocks.emplace_back(std::move(*line));
    if (!e.points.empty())
      s.blocks.emplace_back(Paragraph{"bound: memory when moving X, W and Y at the measured memory read takes longer "
                                      "than 2MNK at the measured square-GEMM peak, compute otherwise; latency when the "
                                      "launch floor exceeds both",
                                      Tone::dim});
    doc.sections.push_back(std::move(s));
  }
}

}  // namespace interprobe::render
