// The `bandwidth` section: engines, one summary row per sweep (fit, expected), the curves
// (GB/s per size), GPU-pair matrices and the P2P verdict per pair.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "common/units.hpp"
#include "model/page_backing.hpp"
#include "report/render/document.hpp"

namespace interprobe::render {

namespace {

using report::BandwidthPoint;
using report::BandwidthSweep;
using report::SweepStatus;

// "pages auto: src 0%, dst 0% in 2 MiB pages; copies on CPU 1" for host sweeps.
std::optional<std::string> conditions_text(const BandwidthSweep& s) {
  std::string backing;
  for (const auto& b : s.buffers)
    if (auto f = report::huge_page_fraction(b)) backing += fmt::format("{}{} {:.0f}%", backing.empty() ? "" : ", ", to_string(b.role), 100 * *f);
  std::set<std::int64_t> cpus;
  for (const auto& p : s.points) cpus.insert(p.copy_cpus.begin(), p.copy_cpus.end());
  if (!s.pages && backing.empty() && cpus.empty()) return std::nullopt;
  std::string text = fmt::format("pages {}", s.pages ? to_string(*s.pages) : "?");
  text += backing.empty() ? " (backing unknown)" : ": " + backing + " in 2 MiB pages";
  if (!cpus.empty()) {
    std::string list;
    for (auto c : cpus) list += fmt::format("{}{}", list.empty() ? "" : ",", c);
    text += fmt::format("; copies ran on CPU {}", list);
  }
  return text;
}

std::string path_label(const BandwidthSweep& s) {
  std::string label =
      fmt::format("{} {} {} {}", to_string(s.engine), to_string(s.kind), s.src, s.directions == 2 ? "<->" : "->");
  label += " " + s.dst;
  if (s.memory_kind) label += fmt::format(" {}", to_string(*s.memory_kind));
  if (s.threads && *s.threads > 1) label += fmt::format(" x{}", *s.threads);
  return label;
}


Cell status_of(const BandwidthSweep& s) {
  if (s.status == SweepStatus::complete) return {to_string(s.status), Tone::good};
  std::string text = to_string(s.status) + (s.reason ? ": " + *s.reason : "");
  return {text, s.status == SweepStatus::interrupted || s.status == SweepStatus::unsupported ? Tone::warn : Tone::bad};
}

Cell verified_of(const BandwidthSweep& s) {
  bool any = false;
  for (const auto& p : s.points) {
    if (p.verified == false) return {"FAIL at " + size_text(p.bytes), Tone::bad};
    any = any || p.verified.has_value();
  }
  return any ? Cell("ok", Tone::good) : Cell("-", Tone::dim);
}

Cell percent_of_expected(const BandwidthSweep& s) {
  if (!s.expected_gbps || *s.expected_gbps <= 0 || s.points.empty()) return {"-", Tone::dim};
  double pct = 100.0 * s.points.back().gbps / *s.expected_gbps;
  return {fmt::format("{:.0f}%", pct), pct < 70 ? Tone::warn : Tone::plain};
}

Table sweeps_table(const std::vector<BandwidthSweep>& sweeps) {
  Table t;
  t.caption = "per sweep: fit of time = t0 + bytes / peak (residual over the sizes it follows / all sizes); "
              "'largest' = median rate at the largest size; expected = slowest link on the path (raw)";
  t.header = {"#", "path", "status", "peak GB/s", "largest", "t0 us", "n1/2", "fit resid", "expected GB/s", "% exp", "data"};
  t.align = std::vector<Align>(t.header.size(), Align::right);
  t.align[1] = t.align[2] = t.align[10] = Align::left;
  for (std::size_t i = 0; i < sweeps.size(); ++i) {
    const auto& s = sweeps[i];
    std::vector<Cell> row = {Cell(std::to_string(i + 1)), Cell(path_label(s)), status_of(s)};
    if (s.fit) {
      row.emplace_back(format_gbps(s.fit->peak_gbps));
    } else {
      row.emplace_back("-", Tone::dim);
    }
    row.push_back(s.points.empty() ? Cell("-", Tone::dim)
                                   : Cell(fmt::format("{} @ {}", format_gbps(s.points.back().gbps), size_text(s.points.back().bytes))));
    if (s.fit) {
      // memcpy calls cost nanoseconds: keep digits that format_us would round away.
      row.emplace_back(s.fit->t0_us < 0.1 ? fmt::format("{:.4f}", s.fit->t0_us) : format_us(s.fit->t0_us));
      row.push_back(s.fit->n_half_bytes ? Cell(format_bytes(static_cast<std::uint64_t>(*s.fit->n_half_bytes))) : Cell("-", Tone::dim));
      // Sizes the line follows out of all: host copies below the last-level cache are another regime.
      row.emplace_back(fmt::format("{:.1f}% ({}/{})", 100 * s.fit->residual_fraction, s.fit->points_used, s.points.size()),
                       s.fit->residual_fraction > 0.1 ? Tone::dim : Tone::plain);
    } else {
      for (int k = 0; k < 3; ++k) row.emplace_back("-", Tone::dim);
    }
    row.push_back(s.expected_gbps ? Cell(format_gbps(*s.expected_gbps)) : Cell("-", Tone::dim));
    row.push_back(percent_of_expected(s));
    row.push_back(verified_of(s));
    t.rows.push_back(std::move(row));
  }
  return t;
}

// The 95% interval of the median as GB/s (low rate first), when it spans more than 5% of the
// median: narrower ones say nothing a reader needs to compare two runs.
std::optional<std::string> wide_interval_text(const BandwidthPoint& p, std::int64_t directions) {
  if (!p.median_ci_low_us || !p.median_ci_high_us || p.median_us <= 0 || *p.median_ci_low_us <= 0) return std::nullopt;
  if ((*p.median_ci_high_us - *p.median_ci_low_us) / p.median_us <= 0.05) return std::nullopt;
  auto rate = [&](double us) { return static_cast<double>(p.bytes) * static_cast<double>(directions) / (us * 1e3); };
  return fmt::format("[{}-{}]", format_gbps(rate(*p.median_ci_high_us)), format_gbps(rate(*p.median_ci_low_us)));
}

// GB/s per size, a few sweeps per table so it fits a terminal; CV in brackets when above 2%,
// the interval of the median when wide.
std::vector<Table> curve_tables(const std::vector<BandwidthSweep>& sweeps) {
  std::vector<Table> tables;
  constexpr std::size_t kColumns = 5;
  for (std::size_t first = 0; first < sweeps.size(); first += kColumns) {
    std::size_t last = std::min(sweeps.size(), first + kColumns);
    Table t;
    t.caption = fmt::format("GB/s at the median time per size, sweeps {}-{} (CV shown when above 2%; [95% interval of "
                            "the median] when wider than 5%)",
                            first + 1, last);
    t.header = {"size"};
    std::set<std::int64_t> sizes;
    for (std::size_t i = first; i < last; ++i) {
      t.header.push_back(fmt::format("#{}", i + 1));
      for (const auto& p : sweeps[i].points) sizes.insert(p.bytes);
    }
    if (sizes.empty()) continue;
    t.align = std::vector<Align>(t.header.size(), Align::right);
    for (auto bytes : sizes) {
      std::vector<Cell> row = {Cell(size_text(bytes))};
      for (std::size_t i = first; i < last; ++i) {
        auto it = std::find_if(sweeps[i].points.begin(), sweeps[i].points.end(), [&](const auto& p) { return p.bytes == bytes; });
        if (it == sweeps[i].points.end()) {
          row.emplace_back("-", Tone::dim);
          continue;
        }
        std::string text = format_gbps(it->gbps);
        if (it->cv_fraction > 0.02) text += fmt::format(" ({:.0f}%)", 100 * it->cv_fraction);
        if (auto interval = wide_interval_text(*it, sweeps[i].directions)) text += " " + *interval;
        row.emplace_back(text, it->verified == false ? Tone::bad : it->cv_fraction > 0.05 ? Tone::dim : Tone::plain);
      }
      t.rows.push_back(std::move(row));
    }
    tables.push_back(std::move(t));
  }
  return tables;
}

// One matrix per GPU-to-GPU kind (in the order of their names): bandwidth at the largest size and
// time at the smallest.
std::vector<Table> pair_matrices(const std::vector<BandwidthSweep>& sweeps) {
  std::map<std::string, std::vector<const BandwidthSweep*>> by_kind;
  std::set<std::string> gpus;
  for (const auto& s : sweeps) {
    bool pair_kind = s.engine == report::BandwidthEngine::cuda && report::is_gpu_to_gpu(s.kind);
    if (!pair_kind || s.points.empty()) continue;
    by_kind[to_string(s.kind)].push_back(&s);
    gpus.insert(s.src);
    gpus.insert(s.dst);
  }
  std::vector<Table> tables;
  for (const auto& [kind, list] : by_kind) {
    Table t;
    t.caption = fmt::format("{}: GB/s at the largest size / us at the smallest (rows src, columns dst)", kind);
    t.header = {"src \\ dst"};
    for (const auto& g : gpus) t.header.push_back(g);
    t.align = std::vector<Align>(t.header.size(), Align::right);
    t.align[0] = Align::left;
    for (const auto& src : gpus) {
      std::vector<Cell> row = {Cell(src)};
      for (const auto& dst : gpus) {
        auto it = std::find_if(list.begin(), list.end(), [&](const auto* s) { return s->src == src && s->dst == dst; });
        if (it == list.end()) {
          row.emplace_back("-", Tone::dim);
          continue;
        }
        const auto& pts = (*it)->points;
        row.emplace_back(fmt::format("{} / {}", format_gbps(pts.back().gbps), format_us(pts.front().median_us)));
      }
      t.rows.push_back(std::move(row));
    }
    tables.push_back(std::move(t));
  }
  return tables;
}

Table truth_table(const std::vector<report::P2pPairTruth>& pairs) {
  Table t{"P2P per GPU pair, from measurements", {"src", "dst", "peer access", "verdict", "why"}, {}, {}};
  for (const auto& p : pairs) {
    using report::P2pTruth;
    Tone tone = p.truth == P2pTruth::p2p ? Tone::good : p.truth == P2pTruth::corrupt ? Tone::bad : Tone::warn;
    t.rows.push_back({Cell(p.src), Cell(p.dst), Cell(p.peer_access_claimed ? "claimed" : "no"), Cell(to_string(p.truth), tone),
                      Cell(p.reason)});
  }
  return t;
}

// GPU x GPU as nvbandwidth prints it, from the checked transfers: GB/s at the largest size, each
// cell marked direct (P2P verified) or staged (through host memory, whatever NVML claimed).
Table truth_matrix(const std::vector<report::P2pPairTruth>& pairs) {
  auto gbps = [](const std::optional<double>& v) { return v ? format_gbps(*v) : std::string("-"); };
  std::set<std::string> gpus;
  for (const auto& p : pairs) gpus.insert(p.src), gpus.insert(p.dst);
  Table t{"measured GB/s per GPU pair (rows src, columns dst; direct = P2P verified, staged = through host memory)",
          {"src \\ dst"}, {Align::left}, {}};
  for (const auto& g : gpus) t.header.push_back(g), t.align.push_back(Align::right);
  for (const auto& src : gpus) {
    std::vector<Cell> row{Cell(src)};
    for (const auto& dst : gpus) {
      auto it = std::find_if(pairs.begin(), pairs.end(), [&](const auto& p) { return p.src == src && p.dst == dst; });
      if (src == dst) row.emplace_back("X");
      else if (it == pairs.end()) row.emplace_back("-", Tone::dim);
      else if (it->truth == report::P2pTruth::corrupt) row.emplace_back("corrupt", Tone::bad);
      else if (it->truth == report::P2pTruth::p2p) row.emplace_back(fmt::format("{} direct", gbps(it->p2p_gbps)), Tone::good);
      else row.emplace_back(fmt::format("{} staged{}", gbps(it->staged_gbps), it->peer_access_claimed ? " (P2P claimed)" : ""), Tone::warn);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

void add_bandwidth_view(const report::Report& r, Document& doc) {
  if (!r.bandwidth) return;
  const auto& b = *r.bandwidth;
  Section s{"bandwidth", {}};
  KeyValues kv;
  kv.add("plan", to_string(b.plan));
  kv.add("target CV", fmt::format("{:g}%", 100 * b.target_cv_fraction));
  kv.add("passes", fmt::format("{} (sizes in a shuffled order, samples pooled)", b.passes));
  if (b.thp_mode) kv.add("huge pages", std::string("transparent, ") + to_string(*b.thp_mode));
  for (const auto& e : b.engines) {
    using report::EngineStatus;
    Tone tone = e.status == EngineStatus::ok ? Tone::good : e.status == EngineStatus::failed ? Tone::bad : Tone::warn;
    kv.add(fmt::format("engine {}", to_string(e.engine)), Cell(to_string(e.status) + (e.reason ? ": " + *e.reason : ""), tone));
    for (const auto& note : e.notes) kv.add("  note", Cell(note, Tone::dim));
  }
  s.blocks.push_back(std::move(kv));
  if (!b.sweeps.empty()) {
    s.blocks.push_back(sweeps_table(b.sweeps));
    for (std::size_t i = 0; i < b.sweeps.size(); ++i) {
      if (auto conditions = conditions_text(b.sweeps[i]))
        s.blocks.push_back(Paragraph{fmt::format("#{}: {}", i + 1, *conditions), Tone::dim});
      for (const auto& note : b.sweeps[i].notes)
        s.blocks.push_back(Paragraph{fmt::format("#{}: {}", i + 1, note), Tone::dim});
      std::vector<const report::MeasurementTelemetry*> telemetry;
      for (const auto& p : b.sweeps[i].points) telemetry.push_back(p.telemetry ? &*p.telemetry : nullptr);
      if (auto line = measurement_telemetry_line(telemetry, "sizes"))
        s.blocks.push_back(Paragraph{fmt::format("#{}: {}", i + 1, line->text), line->tone});
    }
    for (auto& t : curve_tables(b.sweeps)) s.blocks.push_back(std::move(t));
    for (auto& t : pair_matrices(b.sweeps)) s.blocks.push_back(std::move(t));
  }
  if (!b.p2p_pairs.empty()) {
    s.blocks.push_back(truth_matrix(b.p2p_pairs));
    s.blocks.push_back(truth_table(b.p2p_pairs));
  }
  doc.sections.push_back(std::move(s));
}

}  // namespace interprobe::render
