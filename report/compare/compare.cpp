#include "report/compare/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "common/statistics.hpp"
#include "report/compare/noise_test.hpp"

namespace interprobe::compare {

using report::Better;
using report::MetricRow;
using report::MetricSpread;

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::worse: return "worse";
    case Verdict::mixed: return "mixed";
    case Verdict::better: return "better";
    case Verdict::changed: return "changed";
    case Verdict::only_in_one: return "only_in_one";
    case Verdict::same: return "same";
  }
  return "same";
}

namespace {

// A sibling's spread moved onto `row`: relative widths carry over; a rate next to a time
// (busbw next to time_us) is its inverse, so its interval flips.
MetricSpread borrow(const MetricRow& row, const MetricRow& sibling) {
  const MetricSpread& s = *sibling.spread;
  MetricSpread out = MetricSpread::of(s.samples, s.cv_fraction);
  if (sibling.value <= 0 || row.value <= 0) return out;
  bool inverse = (row.better == Better::higher) != (sibling.better == Better::higher);
  auto scaled = [&](std::optional<double> v) -> std::optional<double> {
    if (!v || *v <= 0) return std::nullopt;
    return inverse ? row.value * sibling.value / *v : row.value * *v / sibling.value;
  };
  out.interval_low = scaled(inverse ? s.interval_high : s.interval_low);
  out.interval_high = scaled(inverse ? s.interval_low : s.interval_high);
  out.min = scaled(inverse ? s.max : s.min);
  out.max = scaled(inverse ? s.min : s.max);
  out.typical_low = scaled(inverse ? s.typical_high : s.typical_low);
  out.typical_high = scaled(inverse ? s.typical_low : s.typical_high);
  out.passes_low = scaled(inverse ? s.passes_high : s.passes_low);
  out.passes_high = scaled(inverse ? s.passes_low : s.passes_high);
  out.resolution_low = scaled(inverse ? s.resolution_high : s.resolution_low);
  out.resolution_high = scaled(inverse ? s.resolution_low : s.resolution_high);
  return out;
}

RunRows rows_of(const report::Report& r, std::vector<MetricRow>& order) {
  std::vector<MetricRow> rows = report::metrics_of(r);
  std::map<std::string, const MetricRow*> timed_sibling;  // point -> first row with a spread
  for (const auto& row : rows)
    if (row.spread) timed_sibling.emplace(report::point_path(row), &row);
  RunRows out;
  for (const auto& row : rows) {
    RunValue v{row.value, row.spread, false};
    if (!v.spread && !read_not_timed(row.section)) {
      auto it = timed_sibling.find(report::point_path(row));
      if (it != timed_sibling.end()) v = {row.value, borrow(row, *it->second), true};
    }
    out.emplace(row.path, v);
    order.push_back(row);
  }
  return out;
}

// "collective/mpi", "bandwidth/host", "topology": the section and what measured it, from the labels.
std::string source_of(const MetricRow& row) {
  for (const char* key : {"engine", "backend"})
    if (auto it = row.labels.find(key); it != row.labels.end()) return row.section + "/" + it->second;
  return row.section;
}

double median_of(std::vector<double> v) { return percentile(std::move(v), 0.5); }

// Change in the metric's good direction: negative = worse.
std::optional<double> signed_change(const MetricComparison& m, const SideValue& s) {
  if (!s.change_fraction || m.better == Better::neither) return std::nullopt;
  return m.better == Better::higher ? *s.change_fraction : -*s.change_fraction;
}

// Two-sided sign test: P(a split at least this uneven | each size equally likely up or down).
double sign_test_p(std::int64_t k, std::int64_t n) {
  if (n == 0) return 1;
  std::int64_t top = std::max(k, n - k);
  long double tail = 0;
  for (std::int64_t i = top; i <= n; ++i)
    tail += std::exp(std::lgamma(n + 1.0L) - std::lgamma(i + 1.0L) - std::lgamma(n - i + 1.0L) - n * std::log(2.0L));
  return std::min(1.0, static_cast<double>(2 * tail));
}

int rank_of(Verdict v) { return static_cast<int>(v); }

}  // namespace

Verdict worst_verdict(const SeriesComparison& s, std::size_t baseline) {
  Verdict worst = Verdict::same;
  for (std::size_t i = 0; i < s.sides.size(); ++i)
    if (i != baseline && rank_of(s.sides[i].verdict) < rank_of(worst)) worst = s.sides[i].verdict;
  return worst;
}

std::string side_letter(std::size_t side) {
  return side < 26 ? std::string(1, static_cast<char>('A' + side)) : "#" + std::to_string(side + 1);
}

Verdict worst_verdict(const MetricComparison& m, std::size_t baseline) {
  Verdict worst = Verdict::same;
  for (std::size_t i = 0; i < m.sides.size(); ++i)
    if (i != baseline && rank_of(m.sides[i].verdict) < rank_of(worst)) worst = m.sides[i].verdict;
  return worst;
}

namespace {

std::optional<Interval> own_interval(const SideSummary& s) {
  if (!s.value) return std::nullopt;
  if (s.runs.size() >= 2) return envelope(s);
  return interval_of(s.runs.front());
}

SideSummary summarize_side(const std::string& path, const std::vector<RunRows>& runs) {
  SideSummary s;
  std::vector<double> values;
  for (const auto& run : runs)
    if (auto it = run.find(path); it != run.end()) {
      s.runs.push_back(it->second);
      s.borrowed = s.borrowed || it->second.borrowed;
      values.push_back(it->second.value);
    }
  if (!values.empty()) s.value = median_of(values);
  return s;
}

MetricComparison compare_metric(const MetricRow& row, const std::vector<std::vector<RunRows>>& sides, std::size_t baseline,
                                const Options& o) {
  MetricComparison m{row.path, row.section, source_of(row), row.unit, row.better, report::series_path(row), {}};
  std::vector<SideSummary> summaries;
  for (const auto& runs : sides) summaries.push_back(summarize_side(row.path, runs));
  const SideSummary& base = summaries[baseline];
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    const SideSummary& s = summaries[i];
    SideValue v;
    v.value = s.value;
    if (auto iv = own_interval(s)) v.low = iv->low, v.high = iv->high;
    if (i == baseline) {
      v.verdict = s.value ? Verdict::same : Verdict::only_in_one;
    } else if (!s.value || !base.value) {
      v.verdict = Verdict::only_in_one;
      v.test = s.value ? "absent in baseline" : "absent";
    } else if (row.section == "probes") {
      // How long interprobe ran follows its budgets and options, not the machine: shown, not judged.
      if (*base.value != 0) v.change_fraction = (*s.value - *base.value) / std::abs(*base.value);
      v.test = "not judged";
    } else {
      if (*base.value != 0) v.change_fraction = (*s.value - *base.value) / std::abs(*base.value);
      else if (*s.value == 0) v.change_fraction = 0.0;
      TestResult t = run_test(row.section, base, s, o);
      v.verdict = verdict_for(row, t, v.change_fraction, o);
      v.test = t.test;
      // The cv band is drawn around the baseline: shown on the baseline's side.
      if (t.band_around_baseline && t.a) v.low = t.a->low, v.high = t.a->high;
    }
    m.sides.push_back(v);
  }
  return m;
}

SeriesSide judge_series(const std::vector<const MetricComparison*>& members, std::size_t side, const Options& o) {
  SeriesSide out;
  std::vector<double> changes;
  for (const auto* m : members) {
    const SideValue& s = m->sides[side];
    if (s.verdict == Verdict::only_in_one) {
      ++(s.value ? out.sizes_only_here : out.sizes_only_in_baseline);
      continue;
    }
    ++out.sizes;
    out.sizes_worse += s.verdict == Verdict::worse;
    out.sizes_better += s.verdict == Verdict::better;
    if (auto c = signed_change(*m, s)) {
      changes.push_back(*c);
      out.moved_worse += *c < 0;
      out.moved_better += *c > 0;
    }
  }
  if (!changes.empty()) out.median_change_fraction = median_of(changes);
  out.sign_test_p = sign_test_p(out.moved_worse, out.moved_worse + out.moved_better);
  bool significant = out.sign_test_p < o.sign_test_alpha && out.median_change_fraction;
  if ((significant && *out.median_change_fraction <= -o.min_change_fraction) ||
      (out.sizes_worse > 0 && out.sizes_better == 0 && 2 * out.sizes_worse >= out.sizes))
    out.verdict = Verdict::worse;
  else if ((significant && *out.median_change_fraction >= o.min_change_fraction) ||
           (out.sizes_better > 0 && out.sizes_worse == 0 && 2 * out.sizes_better >= out.sizes))
    out.verdict = Verdict::better;
  else if (out.sizes == 0 && out.sizes_only_here + out.sizes_only_in_baseline > 0)
    out.verdict = Verdict::only_in_one;  // nothing to compare: the path is on one side only
  else if (out.sizes_worse + out.sizes_better > 0)
    out.verdict = Verdict::mixed;  // the sizes that moved are named, not averaged into `same`
  return out;
}

// Ranking key: worse by the largest loss, better by the largest gain, the rest in report order.
double rank_change(const std::vector<SideValue>& sides, const MetricComparison* m, const std::vector<SeriesSide>* series,
                   Verdict verdict, std::size_t baseline) {
  double key = 0;
  std::size_t n = m ? sides.size() : series->size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i == baseline) continue;
    std::optional<double> c;
    if (m && sides[i].verdict == verdict) c = signed_change(*m, sides[i]);
    if (series && (*series)[i].verdict == verdict) c = (*series)[i].median_change_fraction;
    bool loss = verdict == Verdict::worse || verdict == Verdict::mixed;
    if (c) key = loss ? std::min(key, *c) : std::max(key, *c);
  }
  return verdict == Verdict::worse || verdict == Verdict::mixed ? key : -key;  // ascending sort puts the largest move first
}


std::vector<SeriesComparison> compare_series(const std::vector<MetricComparison>& metrics, std::size_t sides,
                                             std::size_t baseline, const Options& o) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const MetricComparison*>> members;
  for (const auto& m : metrics)
    if (m.series) {
      if (!members.count(*m.series)) order.push_back(*m.series);
      members[*m.series].push_back(&m);
    }
  std::vector<SeriesComparison> out;
  for (const auto& name : order) {
    SeriesComparison s{name, {}};
    for (std::size_t i = 0; i < sides; ++i) s.sides.push_back(i == baseline ? SeriesSide{} : judge_series(members[name], i, o));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

namespace {

std::vector<MetricRow> union_of_rows(const std::vector<Side>& sides, std::vector<std::vector<RunRows>>& rows) {
  std::vector<MetricRow> order;
  std::set<std::string> seen;
  for (const auto& side : sides) {
    rows.emplace_back();
    for (const auto& run : side.runs) {
      std::vector<MetricRow> run_order;
      rows.back().push_back(rows_of(run, run_order));
      for (auto& row : run_order)
        if (seen.insert(row.path).second) order.push_back(std::move(row));
    }
  }
  return order;
}

// A side's value of a setting: its runs' value, or each distinct one joined when they disagree.
std::string side_setting(const std::vector<std::map<std::string, std::string>>& runs, const std::string& name) {
  std::vector<std::string> values;
  for (const auto& run : runs) {
    auto it = run.find(name);
    std::string v = it == run.end() ? "-" : it->second;
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  }
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : " | ") + v;
  return out;
}

void diff_settings(const std::vector<Side>& sides, Comparison& c) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  std::vector<std::vector<std::map<std::string, std::string>>> per_side;
  for (const auto& side : sides) {
    per_side.emplace_back();
    for (const auto& run : side.runs) {
      per_side.back().emplace_back();
      for (auto& [name, value] : settings_of(run)) {
        if (seen.insert(name).second) names.push_back(name);
        per_side.back().back()[name] = value;
      }
    }
  }
  for (const auto& name : names) {
    SettingDiff d{name, {}};
    for (const auto& runs : per_side) d.values.push_back(side_setting(runs, name));
    bool differs = std::any_of(d.values.begin(), d.values.end(), [&](const std::string& v) { return v != d.values.front(); });
    if (differs) c.settings.push_back(std::move(d));
    else ++c.settings_same;
  }
}

}  // namespace

Comparison compare_sides(const std::vector<Side>& sides, std::size_t baseline, const Options& options) {
  Comparison c;
  c.baseline = baseline;
  c.options = options;
  for (const auto& s : sides) {
    c.labels.push_back(s.label);
    c.runs.push_back(static_cast<std::int64_t>(s.runs.size()));
  }
  std::vector<std::vector<RunRows>> rows;
  for (const auto& row : union_of_rows(sides, rows)) c.metrics.push_back(compare_metric(row, rows, baseline, options));
  c.series = compare_series(c.metrics, sides.size(), baseline, options);

  std::stable_sort(c.metrics.begin(), c.metrics.end(), [&](const MetricComparison& a, const MetricComparison& b) {
    Verdict va = worst_verdict(a, baseline), vb = worst_verdict(b, baseline);
    if (va != vb) return rank_of(va) < rank_of(vb);
    return rank_change(a.sides, &a, nullptr, va, baseline) < rank_change(b.sides, &b, nullptr, vb, baseline);
  });
  std::stable_sort(c.series.begin(), c.series.end(), [&](const SeriesComparison& a, const SeriesComparison& b) {
    Verdict va = worst_verdict(a, baseline), vb = worst_verdict(b, baseline);
    if (va != vb) return rank_of(va) < rank_of(vb);
    return rank_change({}, nullptr, &a.sides, va, baseline) < rank_change({}, nullptr, &b.sides, vb, baseline);
  });
  diff_settings(sides, c);
  return c;
}

}  // namespace interprobe::compare
