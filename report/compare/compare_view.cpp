// The comparison as a Document (text, markdown) and as JSON. Labels and setting values come from
// files and machines: raw here, escaped by each renderer.
#include <fmt/format.h>

#include "common/units.hpp"
#include "report/compare/compare.hpp"
#include "model/json_codec.hpp"  // std::optional as null

namespace interprobe::compare {

NLOHMANN_JSON_SERIALIZE_ENUM(Verdict, {{Verdict::worse, "worse"},
                                       {Verdict::mixed, "mixed"},
                                       {Verdict::better, "better"},
                                       {Verdict::changed, "changed"},
                                       {Verdict::only_in_one, "only_in_one"},
                                       {Verdict::same, "same"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Options, min_change_fraction, cv_k, sign_test_alpha)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SideValue, value, low, high, change_fraction, verdict, test)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MetricComparison, path, section, source, unit, better, series, sides)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SeriesSide, sizes, sizes_worse, sizes_better, moved_worse, moved_better,
                                   sizes_only_here, sizes_only_in_baseline, median_change_fraction, sign_test_p, verdict)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SeriesComparison, series, sides)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SettingDiff, name, values)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Comparison, labels, runs, baseline, options, metrics, series, settings, settings_same)

namespace {

using render::Cell;
using render::Tone;

Tone tone_of(Verdict v) {
  switch (v) {
    case Verdict::worse: return Tone::bad;
    case Verdict::mixed: return Tone::warn;
    case Verdict::better: return Tone::good;
    case Verdict::changed: return Tone::warn;
    case Verdict::only_in_one: return Tone::dim;
    case Verdict::same: return Tone::plain;
  }
  return Tone::plain;
}

std::string number(std::optional<double> v) {
  if (!v) return "-";
  return *v < 0 ? "-" + format_significant(-*v) : format_significant(*v);
}

std::string percent_of_baseline(const SideValue& s) {
  return s.change_fraction ? fmt::format("{:.1f}%", 100 * (1 + *s.change_fraction)) : "-";
}

std::string signed_percent(std::optional<double> f) { return f ? fmt::format("{:+.1f}%", 100 * *f) : "-"; }

// A one-sided row names its side: "only in B" (the compared report has it), "only in A" (the baseline).
std::string verdict_word(const Comparison& c, const SideValue& v, std::size_t side) {
  if (v.verdict != Verdict::only_in_one) return to_string(v.verdict);
  return "only in " + side_letter(v.value ? side : c.baseline);
}

std::string metric_verdict(const Comparison& c, const SideValue& v, std::size_t side) {
  std::string word = verdict_word(c, v, side);
  return v.test.empty() || v.verdict == Verdict::only_in_one ? word : fmt::format("{} ({})", word, v.test);
}

std::string series_verdict(const Comparison& c, const SeriesSide& x, std::size_t side) {
  if (x.verdict == Verdict::only_in_one)
    return fmt::format("only in {} ({} sizes)", side_letter(x.sizes_only_here ? side : c.baseline),
                       x.sizes_only_here ? x.sizes_only_here : x.sizes_only_in_baseline);
  std::string word = to_string(x.verdict);
  if (x.verdict == Verdict::mixed)
    word = fmt::format("mixed ({} of {} worse, {} better)", x.sizes_worse, x.sizes, x.sizes_better);
  return fmt::format("{} {} ({}/{} down, {}/{} up, p={:.2g})", word, signed_percent(x.median_change_fraction), x.moved_worse, x.sizes,
                     x.moved_better, x.sizes, x.sign_test_p);
}

std::string side_name(const Comparison& c, std::size_t i) {
  return fmt::format("{} = {}", side_letter(i), c.labels[i]);
}

render::Section summary_section(const Comparison& c, bool detail) {
  render::Section s{"summary", {}};
  render::KeyValues kv;
  for (std::size_t i = 0; i < c.labels.size(); ++i) {
    std::string role = i == c.baseline ? "baseline" : fmt::format("vs baseline");
    kv.add(side_name(c, i), Cell{fmt::format("{}, {} run{}", role, c.runs[i], c.runs[i] == 1 ? "" : "s")});
  }
  s.blocks.emplace_back(std::move(kv));
  render::Table t{"verdicts per metric", {"report", "same", "worse", "better", "changed", "only in one side", "same %"}, {}, {}};
  t.align = {render::Align::left, render::Align::right, render::Align::right, render::Align::right, render::Align::right,
             render::Align::right, render::Align::right};
  for (std::size_t i = 0; i < c.labels.size(); ++i) {
    if (i == c.baseline) continue;
    std::map<Verdict, std::int64_t> n;
    for (const auto& m : c.metrics) ++n[m.sides[i].verdict];
    double total = static_cast<double>(c.metrics.size());
    t.rows.push_back({side_letter(i), std::to_string(n[Verdict::same]), Cell{std::to_string(n[Verdict::worse]), n[Verdict::worse] ? Tone::bad : Tone::plain},
                      Cell{std::to_string(n[Verdict::better]), n[Verdict::better] ? Tone::good : Tone::plain},
                      std::to_string(n[Verdict::changed]), std::to_string(n[Verdict::only_in_one]),
                      fmt::format("{:.0f}%", total > 0 ? 100 * n[Verdict::same] / total : 0.0)});
  }
  s.blocks.emplace_back(std::move(t));
  if (!detail) return s;
  s.blocks.emplace_back(render::Paragraph{
      fmt::format("A difference counts when it is outside the noise and at least {:.0f}% of the baseline. Noise, per metric: "
                  "repeated runs -> envelopes of the runs' 95% intervals do not overlap; one run -> the stored 95% "
                  "intervals of the median do not overlap and no rerun noise explains it (interval/cv: within the "
                  "samples' CV; /modes: inside the other run's usual samples; /passes: the runs' pass medians "
                  "overlap), else |B-A| > {} x sqrt(cvA^2 + cvB^2) x A, else the "
                  "samples' min..max ranges do not overlap; rates without a spread borrow their timed sibling's; "
                  "read values (topology, virtualization) compare by equality; derived numbers without a spread by "
                  "the threshold alone; probe durations are not judged. A host copy's time (a size's, or its fit's "
                  "start-up time) is never judged finer than 8 CPU cycles a copy (.../resolution). Per path over its "
                  "sizes: sign test, p < {}.",
                  100 * c.options.min_change_fraction, c.options.cv_k, c.options.sign_test_alpha),
      Tone::dim});
  return s;
}

render::Section settings_section(const Comparison& c) {
  render::Section s{"settings that differ", {}};
  if (c.settings.empty()) {
    s.blocks.emplace_back(render::Paragraph{fmt::format("none ({} compared)", c.settings_same), Tone::good});
    return s;
  }
  render::Table t{fmt::format("{} differ, {} the same", c.settings.size(), c.settings_same), {"setting"}, {}, {}};
  for (const auto& l : c.labels) t.header.push_back(l);
  for (const auto& d : c.settings) {
    std::vector<Cell> row{d.name};
    for (std::size_t i = 0; i < d.values.size(); ++i)
      row.emplace_back(d.values[i], i != c.baseline && d.values[i] != d.values[c.baseline] ? Tone::warn : Tone::plain);
    t.rows.push_back(std::move(row));
  }
  s.blocks.emplace_back(std::move(t));
  return s;
}

render::Section series_section(const Comparison& c) {
  render::Section s{"paths over their sizes", {}};
  render::Table t{"median change in the good direction; sizes that moved worse/better; sign test p", {"path"}, {}, {}};
  for (std::size_t i = 0; i < c.labels.size(); ++i)
    if (i != c.baseline) t.header.push_back(c.labels[i]);
  for (const auto& sc : c.series) {
    std::vector<Cell> row{sc.series};
    for (std::size_t i = 0; i < sc.sides.size(); ++i) {
      if (i == c.baseline) continue;
      const SeriesSide& x = sc.sides[i];
      row.emplace_back(series_verdict(c, x, i), tone_of(x.verdict));
    }
    t.rows.push_back(std::move(row));
  }
  s.blocks.emplace_back(std::move(t));
  return s;
}

render::Section metrics_section(const Comparison& c) {
  render::Section s{"metrics, regressions first", {}};
  render::Table t{"value, % of baseline, verdict (test)", {"metric", "unit", c.labels[c.baseline]}, {}, {}};
  t.align = {render::Align::left, render::Align::left, render::Align::right};
  for (std::size_t i = 0; i < c.labels.size(); ++i) {
    if (i == c.baseline) continue;
    t.header.insert(t.header.end(), {c.labels[i], "%", "verdict"});
    t.align.insert(t.align.end(), {render::Align::right, render::Align::right, render::Align::left});
  }
  for (const auto& m : c.metrics) {
    std::vector<Cell> row{m.path, m.unit, number(m.sides[c.baseline].value)};
    for (std::size_t i = 0; i < m.sides.size(); ++i) {
      if (i == c.baseline) continue;
      const SideValue& v = m.sides[i];
      row.emplace_back(number(v.value));
      row.emplace_back(percent_of_baseline(v));
      row.emplace_back(metric_verdict(c, v, i), tone_of(v.verdict));
    }
    t.rows.push_back(std::move(row));
  }
  s.blocks.emplace_back(std::move(t));
  return s;
}


// The short view's rows: this many of each kind, the largest moves first (the ranking's order).
constexpr std::size_t kBriefRows = 8;

// What changed, by how much, how sure: the moved paths and metrics (capped), then one line per
// block of metrics that only one side has, then what the full view adds.
render::Section brief_section(const Comparison& c, bool detail) {
  render::Section s{"what changed", {}};
  std::size_t hidden = 0;
  render::Table paths{"paths over their sizes that moved (median change in the good direction; how sure)", {"path"}, {}, {}};
  render::Table metrics{"metrics that moved (value, change, verdict and the test that decided it)", {"metric", "unit", side_letter(c.baseline)},
                        {}, {}};
  metrics.align = {render::Align::left, render::Align::left, render::Align::right};
  for (std::size_t i = 0; i < c.labels.size(); ++i) {
    if (i == c.baseline) continue;
    paths.header.push_back(side_letter(i));
    metrics.header.insert(metrics.header.end(), {side_letter(i), "change", "verdict"});
    metrics.align.insert(metrics.align.end(), {render::Align::right, render::Align::right, render::Align::left});
  }
  for (const auto& sc : c.series) {
    Verdict v = worst_verdict(sc, c.baseline);
    if (v == Verdict::same || v == Verdict::only_in_one) continue;
    if (paths.rows.size() == kBriefRows) { ++hidden; continue; }
    std::vector<Cell> row{sc.series};
    for (std::size_t i = 0; i < sc.sides.size(); ++i)
      if (i != c.baseline) row.emplace_back(series_verdict(c, sc.sides[i], i), tone_of(sc.sides[i].verdict));
    paths.rows.push_back(std::move(row));
  }
  std::map<std::string, std::map<std::string, std::int64_t>> one_sided;  // section -> "only in B" -> metrics
  std::vector<std::string> one_sided_order;
  for (const auto& m : c.metrics) {
    Verdict v = worst_verdict(m, c.baseline);
    if (v == Verdict::same) continue;
    if (v == Verdict::only_in_one) {
      const std::string& where = m.source;
      if (!one_sided.count(where)) one_sided_order.push_back(where);
      for (std::size_t i = 0; i < m.sides.size(); ++i)
        if (i != c.baseline && m.sides[i].verdict == Verdict::only_in_one) ++one_sided[where][verdict_word(c, m.sides[i], i)];
      continue;
    }
    if (metrics.rows.size() == kBriefRows) { ++hidden; continue; }
    std::vector<Cell> row{m.path, m.unit, number(m.sides[c.baseline].value)};
    for (std::size_t i = 0; i < m.sides.size(); ++i) {
      if (i == c.baseline) continue;
      row.emplace_back(number(m.sides[i].value));
      row.emplace_back(signed_percent(m.sides[i].change_fraction));
      row.emplace_back(metric_verdict(c, m.sides[i], i), tone_of(m.sides[i].verdict));
    }
    metrics.rows.push_back(std::move(row));
  }
  if (paths.rows.empty() && metrics.rows.empty())
    s.blocks.emplace_back(render::Paragraph{"no path and no metric moved outside the noise", Tone::good});
  if (!paths.rows.empty()) s.blocks.emplace_back(std::move(paths));
  if (!metrics.rows.empty()) s.blocks.emplace_back(std::move(metrics));
  if (!one_sided.empty()) {
    render::Table t{"measured on one side only (not compared)", {"section", "metrics"}, {}, {}};
    for (const auto& where : one_sided_order) {
      std::string counts;
      for (const auto& [word, n] : one_sided[where]) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, word);
      t.rows.push_back({where, Cell{counts, Tone::dim}});
    }
    s.blocks.emplace_back(std::move(t));
  }
  if (detail) {
    if (hidden) s.blocks.emplace_back(render::Paragraph{fmt::format("{} more moved rows: in the tables below", hidden), Tone::dim});
    return s;
  }
  s.blocks.emplace_back(render::Paragraph{
      fmt::format("{}every setting, path and metric with its test: --detail (markdown and HTML always carry them)",
                  hidden ? fmt::format("{} more moved rows not shown; ", hidden) : ""),
      Tone::dim});
  return s;
}

render::Section brief_settings_section(const Comparison& c) {
  render::Section s = settings_section(c);
  for (auto& block : s.blocks)
    if (auto* t = std::get_if<render::Table>(&block); t && t->rows.size() > kBriefRows) {
      t->caption += fmt::format(" (first {} shown; --detail lists all)", kBriefRows);
      t->rows.resize(kBriefRows);
    }
  return s;
}

}  // namespace

render::Document comparison_document(const Comparison& c, bool detail) {
  render::Document doc{"interprobe compare", {}};
  doc.sections.push_back(summary_section(c, detail));
  if (!detail) {
    doc.sections.push_back(brief_settings_section(c));
    doc.sections.push_back(brief_section(c, false));
    return doc;
  }
  doc.sections.push_back(brief_section(c, true));  // the short summary first here too
  doc.sections.push_back(settings_section(c));
  if (!c.series.empty()) doc.sections.push_back(series_section(c));
  doc.sections.push_back(metrics_section(c));
  return doc;
}

nlohmann::json comparison_json(const Comparison& c) { return c; }

}  // namespace interprobe::compare
