// Curves from the report model: bandwidth and time per size per path, all-reduce time and busbw
// per size per variant, GEMM throughput and weight bandwidth per M against the measured roofline.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/units.hpp"
#include "report/render/html/html.hpp"

namespace interprobe::render::html {

namespace {

using report::BandwidthSweep;

constexpr std::size_t kMaxSeries = 12;  // beyond that a legend stops being read; the tables keep all

std::string sweep_name(const BandwidthSweep& s) {
  std::string name = fmt::format("{} {}{}{}", to_string(s.kind), s.src, s.directions == 2 ? "<->" : "->", s.dst);
  if (s.memory_kind) name += " " + std::string(to_string(*s.memory_kind));
  if (s.threads && *s.threads > 1) name += fmt::format(" x{}", *s.threads);
  return name;
}

// Host copies, host<->GPU, GPU<->GPU: one pair of charts each, so no chart mixes 0.1 and 400 GB/s paths.
std::string sweep_group(const BandwidthSweep& s) {
  if (report::is_gpu_to_gpu(s.kind)) return "GPU to GPU";
  if (s.engine == report::BandwidthEngine::cuda) return "host and GPU";
  return "host memory";
}

void cap_series(LineChart& c, std::size_t measured) {
  if (measured <= kMaxSeries) return;
  std::vector<Series> kept;
  std::size_t count = 0;
  for (auto& s : c.series)
    if (s.dashed || count++ < kMaxSeries) kept.push_back(std::move(s));
  c.series = std::move(kept);
  c.notes.push_back(fmt::format("{} of {} paths drawn; the tables below list every one", kMaxSeries, measured));
}

std::pair<LineChart, LineChart> bandwidth_charts(const std::vector<const BandwidthSweep*>& sweeps, const std::string& group,
                                                 std::size_t index) {
  std::string id = fmt::format("bw{}", index);
  LineChart gbps{id + "-gbps", "Bandwidth vs size, " + group, {"size (bytes)", Scale::log_bytes}, {"GB/s", Scale::log}, {}, {}};
  LineChart time{id + "-us", "Time per copy vs size, " + group, {"size (bytes)", Scale::log_bytes}, {"us", Scale::log}, {}, {}};
  std::set<std::pair<double, std::string>> expected_drawn;
  for (const auto* s : sweeps) {
    Series g{sweep_name(*s), {}, false}, t{sweep_name(*s), {}, false};
    for (const auto& p : s->points) {
      std::string note = fmt::format("CV {:.1f}%{}", 100 * p.cv_fraction, p.verified == false ? ", data WRONG" : "");
      g.points.push_back({static_cast<double>(p.bytes), p.gbps, p.gbps * (1 - p.cv_fraction), p.gbps * (1 + p.cv_fraction), note});
      t.points.push_back({static_cast<double>(p.bytes), p.median_us, p.min_us, p.p95_us, note});
    }
    gbps.series.push_back(std::move(g));
    time.series.push_back(std::move(t));
  }
  std::size_t measured = gbps.series.size();
  for (const auto* s : sweeps) {
    if (!s->expected_gbps || s->points.empty()) continue;
    std::string basis = s->expected_basis.value_or("slowest link on the path");
    if (!expected_drawn.insert({*s->expected_gbps, basis}).second) continue;
    Series e{"expected " + format_gbps(*s->expected_gbps) + " GB/s (" + basis + ")", {}, true};
    for (const auto* p : {&s->points.front(), &s->points.back()})
      e.points.push_back({static_cast<double>(p->bytes), *s->expected_gbps, std::nullopt, std::nullopt, "expected, not measured"});
    gbps.series.push_back(std::move(e));
  }
  gbps.notes.push_back("band: median GB/s x (1 +/- CV); dashed: expected from the links (not measured)");
  time.notes.push_back("band: fastest to p95 copy");
  cap_series(gbps, measured);
  cap_series(time, measured);
  return {std::move(gbps), std::move(time)};
}

}  // namespace

std::vector<LineChart> bandwidth_charts(const report::Report& r) {
  std::vector<LineChart> out;
  if (!r.bandwidth) return out;
  std::map<std::string, std::vector<const BandwidthSweep*>> groups;
  for (const auto& s : r.bandwidth->sweeps)
    if (!s.points.empty()) groups[sweep_group(s)].push_back(&s);
  std::size_t index = 0;
  for (const auto& [group, sweeps] : groups) {
    auto [gbps, time] = bandwidth_charts(sweeps, group, index++);
    out.push_back(std::move(gbps));
    out.push_back(std::move(time));
  }
  return out;
}

std::vector<Figure> bandwidth_figures(const report::Report& r) {
  std::vector<Figure> out;
  for (const auto& chart : bandwidth_charts(r)) out.push_back(figure("bandwidth", chart));
  return out;
}

std::vector<Figure> collective_figures(const report::Report& r) {
  std::vector<Figure> out;
  for (const auto& chart : collective_charts(r)) out.push_back(figure("all-reduce", chart));
  return out;
}

std::vector<LineChart> collective_charts(const report::Report& r) {
  std::vector<LineChart> out;
  if (!r.collective) return out;
  LineChart time{"ar-us", "All-reduce time vs size (out of place)", {"size (bytes)", Scale::log_bytes}, {"us", Scale::log}, {}, {}};
  LineChart busbw{"ar-busbw", "All-reduce busbw vs size (out of place)", {"size (bytes)", Scale::log_bytes},
                  {"busbw GB/s (nccl-tests)", Scale::log}, {}, {}};
  for (const auto& s : r.collective->allreduce) {
    std::string name = fmt::format("{} {} {} ranks {}", to_string(s.backend), to_string(s.variant), s.ranks, to_string(s.dtype));
    Series t{name, {}, false}, b{name, {}, false};
    for (const auto& p : s.points) {
      if (p.in_place) continue;
      std::string note = p.wrong_elements ? fmt::format("{} WRONG elements", p.wrong_elements) : "";
      t.points.push_back({static_cast<double>(p.bytes), p.time_us, p.min_us, p.max_us, note});
      b.points.push_back({static_cast<double>(p.bytes), report::headline_of(p).busbw_gbps, std::nullopt, std::nullopt, note});
    }
    if (t.points.empty()) continue;
    time.series.push_back(std::move(t));
    busbw.series.push_back(std::move(b));
  }
  if (time.series.empty()) return out;
  time.notes.push_back("median of the slowest rank; band: fastest to slowest sample");
  busbw.notes.push_back("busbw = algbw x 2(n-1)/n from the mean over ranks, as nccl-tests prints it (the slowest rank's "
                        "where a report has no mean); 0 with one rank (not drawn on a log axis)");
  out.push_back(std::move(time));
  out.push_back(std::move(busbw));
  return out;
}

namespace {

std::pair<LineChart, LineChart> gemm_charts(const report::ComputeEngineResult& e, std::size_t index) {
  std::string engine = to_string(e.engine);
  LineChart rate{fmt::format("gemm{}-tflops", index), "GEMM throughput vs M, " + engine + " engine", {"M (rows of X)", Scale::log},
                 {"TFLOP/s", Scale::log}, {}, {}};
  LineChart weights{fmt::format("gemm{}-gbps", index), "GEMM weight bandwidth vs M, " + engine + " engine", {"M (rows of X)", Scale::log},
                    {"weight GB/s", Scale::log}, {}, {}};
  std::map<std::string, std::vector<const report::GemmPoint*>> lines;  // "o f32" -> points by M
  for (const auto& p : e.points) lines[p.shape + " " + to_string(p.dtype)].push_back(&p);
  double m_lo = INFINITY, m_hi = 0;
  for (const auto& [name, points] : lines) {
    Series rs{name, {}, false}, ws{name, {}, false}, roof{"memory roof " + name, {}, true};
    for (const auto* p : points) {
      double m = static_cast<double>(p->m);
      m_lo = std::min(m_lo, m), m_hi = std::max(m_hi, m);
      std::string note = p->bound ? std::string(to_string(*p->bound)) + " bound" : "";
      if (p->check && !p->check->passed) note += " WRONG result";
      double cv = p->timing.cv_fraction;
      rs.points.push_back({m, p->tflops, p->tflops * (1 - cv), p->tflops * (1 + cv), note});
      ws.points.push_back({m, p->weight_gbps, std::nullopt, std::nullopt, note});
      if (e.memory_ceiling_gbps) roof.points.push_back({m, *e.memory_ceiling_gbps * p->flop_per_byte / 1e3, std::nullopt, std::nullopt, "ceiling"});
    }
    rate.series.push_back(std::move(rs));
    weights.series.push_back(std::move(ws));
    if (!roof.points.empty()) rate.series.push_back(std::move(roof));
  }
  for (const auto& peak : e.peaks) {
    rate.series.push_back({fmt::format("measured peak {} ({}^3)", to_string(peak.dtype), peak.size),
                           {{m_lo, peak.measured_tflops, {}, {}, "ceiling"}, {m_hi, peak.measured_tflops, {}, {}, "ceiling"}}, true});
    if (peak.published_tflops)
      rate.series.push_back({fmt::format("published peak {} (not measured)", to_string(peak.dtype)),
                             {{m_lo, *peak.published_tflops, {}, {}, "published"}, {m_hi, *peak.published_tflops, {}, {}, "published"}},
                             true});
  }
  if (e.memory_ceiling_gbps)
    weights.series.push_back({"memory read ceiling (measured)",
                              {{m_lo, *e.memory_ceiling_gbps, {}, {}, "ceiling"}, {m_hi, *e.memory_ceiling_gbps, {}, {}, "ceiling"}},
                              true});
  else
    rate.notes.push_back("no memory ceiling measured: no memory roof");
  rate.notes.push_back("dashed: ceilings (memory roof = memory read GB/s x flop per byte of the shape; square-GEMM peak)");
  return {std::move(rate), std::move(weights)};
}

}  // namespace

std::vector<Figure> compute_figures(const report::Report& r) {
  std::vector<Figure> out;
  if (!r.compute) return out;
  std::size_t index = 0;
  for (const auto& e : r.compute->engines) {
    ++index;
    if (e.points.empty()) continue;
    auto [rate, weights] = gemm_charts(e, index);
    std::string section = fmt::format("Compute: {} engine", to_string(e.engine));
    out.push_back(figure(section, rate));
    out.push_back(figure(section, weights));
  }
  return out;
}

}  // namespace interprobe::render::html
