// The `collective` section: one block per sweep (all-reduce, then the other collectives), its points as nccl-tests prints
// them (out-of-place and in-place side by side), then the summary.
#include <map>

#include <fmt/format.h>

#include "common/units.hpp"
#include "report/render/document.hpp"

namespace interprobe::render {

namespace {

Cell wrong_cell(std::int64_t wrong) { return wrong == 0 ? Cell("0") : Cell(std::to_string(wrong), Tone::bad); }

Cell status_of(const report::AllreduceSweep& s) {
  using report::AllreduceStatus;
  if (s.status == AllreduceStatus::complete) return {to_string(s.status), Tone::good};
  std::string text = to_string(s.status) + (s.reason ? ": " + *s.reason : "");
  return {text, s.status == AllreduceStatus::interrupted ? Tone::warn : Tone::bad};
}


// The headline is the mean over ranks, as nccl-tests prints it by default; the slowest rank's time
// (what the stored time_us holds) stands beside it. A report without the mean shows the slowest rank's.
std::string aggregate_label(bool mean) { return mean ? "mean over ranks, as nccl-tests" : "slowest rank"; }

// One row per size: out-of-place columns, then in-place ones ("-" where not measured).
Table points_table(const report::AllreduceSweep& s) {
  const bool mean = report::has_rank_mean(s);
  Table t;
  t.caption = mean ? "time per call in microseconds (median of samples); time, algbw and busbw: mean over ranks, as "
                     "nccl-tests; slowest: the slowest rank's time; GB/s = 1e9 B/s"
                   : "time per call in microseconds (median of samples), algbw and busbw in GB/s (1e9 B/s): slowest "
                     "rank (this report has no mean over ranks)";
  std::vector<std::string> per_placement = {"time", "algbw", "busbw", "#wrong"};
  if (mean) per_placement.insert(per_placement.begin() + 1, "slowest");
  t.header = {"size", "count", "type", "redop"};
  for (const char* placement : {"out", "in"})
    for (const auto& column : per_placement) t.header.push_back(fmt::format("{} {}", placement, column));
  t.align = std::vector<Align>(t.header.size(), Align::right);
  t.align[2] = t.align[3] = Align::left;
  std::map<std::int64_t, std::pair<const report::AllreducePoint*, const report::AllreducePoint*>> by_size;
  for (const auto& p : s.points) (p.in_place ? by_size[p.bytes].second : by_size[p.bytes].first) = &p;
  for (const auto& [bytes, pair] : by_size) {
    const auto* any = pair.first ? pair.first : pair.second;
    std::vector<Cell> row = {Cell(size_text(bytes)), Cell(std::to_string(any->elements_per_rank)), Cell(to_string(any->dtype)),
                              Cell(s.op)};
    for (const auto* p : {pair.first, pair.second}) {
      if (!p) {
        for (std::size_t i = 0; i < per_placement.size(); ++i) row.emplace_back("-", Tone::dim);
        continue;
      }
      const auto headline = report::headline_of(*p, mean ? report::RankAggregate::mean : report::RankAggregate::slowest);
      row.emplace_back(format_us(headline.time_us));
      if (mean) row.emplace_back(format_us(p->time_us));
      row.emplace_back(format_gbps(headline.algbw_gbps));
      row.emplace_back(format_gbps(headline.busbw_gbps));
      row.push_back(wrong_cell(p->wrong_elements));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string plateau_text(const report::AllreduceSummary& sum) {
  return fmt::format("{} GB/s busbw from {} (peak {} GB/s)", format_gbps(*sum.plateau_busbw_gbps),
                     size_text(sum.plateau_from_bytes.value_or(-1)), format_gbps(sum.peak_busbw_gbps.value_or(0)));
}

// The headline summary from the mean over ranks (the stored summary, slowest rank, beside it where
// it differs); a report without the mean shows the stored one, labelled.
KeyValues summary_block(const report::AllreduceSweep& s) {
  const bool mean = report::has_rank_mean(s);
  const auto& slowest = s.summary;
  const auto sum = mean ? report::summarize_points(s.points, report::RankAggregate::mean) : slowest;
  auto beside = [&](const std::string& headline, const std::optional<std::string>& slowest_text) {
    std::string text = fmt::format("{} ({}", headline, aggregate_label(mean));
    if (mean && slowest_text && *slowest_text != headline) text += "; slowest rank " + *slowest_text;
    return text + ")";
  };
  KeyValues kv;
  if (sum.latency_us && sum.latency_bytes) {
    auto us = [](const report::AllreduceSummary& x) { return fmt::format("{} us", format_us(*x.latency_us)); };
    kv.add(fmt::format("latency at {} B", *sum.latency_bytes),
           beside(us(sum), slowest.latency_us ? std::optional(us(slowest)) : std::nullopt));
  }
  if (sum.plateau_busbw_gbps)
    kv.add("bandwidth plateau", beside(plateau_text(sum), slowest.plateau_busbw_gbps ? std::optional(plateau_text(slowest))
                                                                                     : std::nullopt));
  else
    kv.add("bandwidth plateau", Cell(s.ranks <= 1 ? "none: one rank has no bus bandwidth" : "not measured", Tone::dim));
  if (sum.half_plateau_bytes) kv.add("half the plateau at", size_text(*sum.half_plateau_bytes));
  kv.add("wrong results", sum.wrong_elements_total == 0
                             ? Cell("none", Tone::good)
                             : Cell(fmt::format("{} elements", sum.wrong_elements_total), Tone::bad));
  return kv;
}

// Consecutive sizes with the same choice collapse into one row: "8 .. 64K  Tree/LL".
Table algorithms_table(const report::AllreduceSweep& s) {
  Table t{"what NCCL chose per size (its TUNING log)", {"sizes", "algorithm/protocol", "calls"}, {}, {}};
  std::map<std::int64_t, std::string> choice_of;
  std::map<std::int64_t, std::int64_t> calls_of;
  for (const auto& a : s.algorithms) {
    auto& text = choice_of[a.bytes];
    text += (text.empty() ? "" : ", ") + a.algorithm + "/" + a.protocol;
    calls_of[a.bytes] += a.calls;
  }
  auto flush = [&](std::int64_t from, std::int64_t to, const std::string& choice, std::int64_t calls) {
    std::string sizes = from == to ? size_text(from) : size_text(from) + " .. " + size_text(to);
    t.rows.push_back({Cell(sizes), Cell(choice), Cell(std::to_string(calls))});
  };
  std::int64_t from = -1, to = -1, calls = 0;
  std::string current;
  for (const auto& [bytes, choice] : choice_of) {
    if (from >= 0 && choice == current) {
      to = bytes;
      calls += calls_of[bytes];
      continue;
    }
    if (from >= 0) flush(from, to, current, calls);
    from = to = bytes;
    current = choice;
    calls = calls_of[bytes];
  }
  if (from >= 0) flush(from, to, current, calls);
  return t;
}

}  // namespace

void add_collective_view(const report::Report& r, Document& doc) {
  if (!r.collective) return;
  std::vector<const report::AllreduceSweep*> sweeps;
  for (const auto& s : r.collective->allreduce) sweeps.push_back(&s);
  for (const auto& s : r.collective->sweeps) sweeps.push_back(&s);
  for (const auto* each : sweeps) {
    const auto& s = *each;
    const bool all_reduce = s.collective == report::CollectiveOp::all_reduce;
    Section section{fmt::format("{}: {} {} {} ranks, {}", all_reduce ? "all-reduce" : to_string(s.collective), to_string(s.backend),
                                to_string(s.variant), s.ranks, to_string(s.dtype)),
                    {}};
    KeyValues kv;
    kv.add("backend", to_string(s.backend) + (s.library_version ? " " + *s.library_version : ""));
    kv.add("ranks", fmt::format("{} on {} node{}", s.ranks, s.nodes, s.nodes == 1 ? "" : "s"));
    kv.add("variant", to_string(s.variant));
    kv.add("status", status_of(s));
    for (const auto& d : s.devices) kv.add("device", d);
    std::string env;
    for (const auto& [k, v] : s.environment) env += fmt::format("{}{}={}", env.empty() ? "" : " ", k, v);
    if (!env.empty()) kv.add("environment", Cell(env, Tone::dim));
    if (!s.transports.empty()) {
      std::string transports;
      for (const auto& t : s.transports)
        transports += fmt::format("{}{} ({} connections)", transports.empty() ? "" : ", ", t.transport, t.connections);
      kv.add("transports", transports);
    }
    if (s.timeout_s > 0) kv.add("watchdog", fmt::format("{:.0f} s per size", s.timeout_s));
    section.blocks.push_back(std::move(kv));
    if (!s.points.empty()) section.blocks.push_back(points_table(s));
    section.blocks.push_back(summary_block(s));
    std::vector<const report::MeasurementTelemetry*> telemetry;
    for (const auto& p : s.points) telemetry.push_back(p.telemetry ? &*p.telemetry : nullptr);
    if (auto line = measurement_telemetry_line(telemetry, "sizes")) section.blocks.push_back(std::move(*line));
    if (!s.algorithms.empty()) section.blocks.push_back(algorithms_table(s));
    for (const auto& note : s.notes) section.blocks.push_back(Paragraph{note, Tone::dim});
    doc.sections.push_back(std::move(section));
  }
}

}  // namespace interprobe::render
