// Line charts on log axes and the shared pieces (escaping, ticks, legend); bars and heatmaps are
// in svg_grid.cpp.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/text.hpp"
#include "common/units.hpp"
#include "report/render/html/svg_chart.hpp"
#include "report/render/renderers.hpp"
#include "report/render/html/svg_parts.hpp"

namespace interprobe::render::html {

std::string html_escape(const std::string& raw) { return escape_xml(raw); }

const char* palette(std::size_t i) {
  static const char* colours[] = {"#1f6feb", "#d9480f", "#2b8a3e", "#9c36b5", "#c92a2a", "#0b7285", "#e67700", "#495057"};
  return colours[i % (sizeof colours / sizeof *colours)];
}

std::string tick_label(double v, bool bytes) {
  if (bytes) return format_size_label(static_cast<std::uint64_t>(std::llround(v)));
  // Ticks are 1-2-5 values: no trailing zeros ("1", not "1.00"), thousands and millions short.
  if (v >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (v >= 1e4) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:g}", v);
}

std::vector<double> log_ticks(double lo, double hi, bool bytes) {
  std::vector<double> ticks;
  if (!(lo > 0) || !(hi >= lo)) return ticks;
  if (bytes) {
    int k_lo = static_cast<int>(std::ceil(std::log2(lo) - 1e-9)), k_hi = static_cast<int>(std::floor(std::log2(hi) + 1e-9));
    int step = std::max(1, (k_hi - k_lo + 7) / 8);
    for (int k = k_lo; k <= k_hi; ++k)
      if (k % step == 0) ticks.push_back(std::ldexp(1.0, k));
    return ticks;
  }
  int d_lo = static_cast<int>(std::floor(std::log10(lo))), d_hi = static_cast<int>(std::ceil(std::log10(hi)));
  bool dense = d_hi - d_lo <= 3;
  int step = std::max(1, (d_hi - d_lo + 7) / 8);
  for (int d = d_lo; d <= d_hi; ++d) {
    if (!dense && d % step != 0) continue;
    for (double m : dense ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      double v = m * std::pow(10.0, d);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
    }
  }
  return ticks;
}

namespace {

// The nearest "nice" values around [lo, hi]: 1-2-5 steps, or powers of two for bytes.
std::pair<double, double> log_domain(double lo, double hi, bool bytes) {
  auto below = [&](double v) {
    if (bytes) return std::exp2(std::floor(std::log2(v) + 1e-9));
    double p = std::pow(10.0, std::floor(std::log10(v)));
    for (double m : {5.0, 2.0, 1.0})
      if (m * p <= v * (1 + 1e-9)) return m * p;
    return p;
  };
  auto above = [&](double v) {
    if (bytes) return std::exp2(std::ceil(std::log2(v) - 1e-9));
    double p = std::pow(10.0, std::floor(std::log10(v)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
      if (m * p >= v * (1 - 1e-9)) return m * p;
    return 10 * p;
  };
  double a = below(lo), b = above(hi);
  if (b <= a) b = a * (bytes ? 2 : 10);
  return {a, b};
}

}  // namespace

Mapping::Mapping(Scale s, double data_lo, double data_hi, double from, double to) : scale(s), px_from(from), px_to(to) {
  if (scale == Scale::linear) {
    lo = std::min(0.0, data_lo);
    hi = data_hi > lo ? data_hi * 1.05 : lo + 1;
  } else {
    std::tie(lo, hi) = log_domain(data_lo, data_hi, scale == Scale::log_bytes);
  }
}

double Mapping::operator()(double v) const {
  double f = scale == Scale::linear ? (v - lo) / (hi - lo) : std::log(v / lo) / std::log(hi / lo);
  return px_from + f * (px_to - px_from);
}

std::vector<double> Mapping::ticks() const {
  if (scale != Scale::linear) return log_ticks(lo, hi, scale == Scale::log_bytes);
  std::vector<double> t;
  double step = std::pow(10.0, std::floor(std::log10((hi - lo) / 2)));
  for (double v = std::ceil(lo / step) * step; v <= hi + 1e-12; v += step) t.push_back(v);
  return t;
}

std::string svg_open(const std::string& id, const std::string& title, int width, int height) {
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{0}\" class=\"chart\" role=\"img\" "
                     "aria-labelledby=\"{0}-t\" viewBox=\"0 0 {2} {3}\" width=\"{2}\" height=\"{3}\">"
                     "<title id=\"{0}-t\">{1}</title>"
                     "<text class=\"ct\" x=\"8\" y=\"18\">{1}</text>",
                     html_escape(id), html_escape(title), width, height);
}

namespace {

// A data value (not a tick): sizes as 64K, other numbers with three significant digits.
std::string value_label(double v, bool bytes) {
  if (bytes) return tick_label(v, true);
  if (v == std::floor(v) && std::abs(v) < 1e12) return fmt::format("{:.0f}", v);  // M, batch: counts
  return format_significant(v);
}

constexpr int kPlotWidth = 640, kPlotLeft = 70, kPlotRight = 620, kPlotTop = 34, kPlotBottom = 290;

bool plottable(const XY& p, Scale xs, Scale ys) {
  return std::isfinite(p.x) && std::isfinite(p.y) && (xs == Scale::linear || p.x > 0) && (ys == Scale::linear || p.y > 0);
}

std::string axes(const Mapping& mx, const Mapping& my, const LineChart& c) {
  std::string out = fmt::format("<g class=\"axis\"><line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>"
                                "<line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\"/>",
                                kPlotLeft, kPlotBottom, kPlotRight, kPlotTop);
  for (double t : mx.ticks()) {
    double x = mx(t);
    out += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
                       x, kPlotTop, kPlotBottom, kPlotBottom + 14, html_escape(tick_label(t, c.x.scale == Scale::log_bytes)));
  }
  for (double t : my.ticks()) {
    double y = my(t);
    out += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>",
                       kPlotLeft, y, kPlotRight, kPlotLeft - 4, y + 4, html_escape(tick_label(t, c.y.scale == Scale::log_bytes)));
  }
  out += fmt::format("<text class=\"al\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", (kPlotLeft + kPlotRight) / 2,
                     kPlotBottom + 32, html_escape(c.x.label));
  out += fmt::format("<text class=\"al\" transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
                     (kPlotTop + kPlotBottom) / 2, html_escape(c.y.label));
  return out + "</g>";
}

std::string series_svg(const Series& s, std::size_t index, const Mapping& mx, const Mapping& my, const LineChart& c) {
  std::vector<const XY*> pts;
  for (const auto& p : s.points)
    if (plottable(p, c.x.scale, c.y.scale)) pts.push_back(&p);
  if (pts.empty()) return "";
  std::string colour = palette(index), out = "<g>";
  std::string upper, lower;
  for (const XY* p : pts) {
    if (!p->low || !p->high || (c.y.scale != Scale::linear && *p->low <= 0)) continue;
    upper += fmt::format("{:.1f},{:.1f} ", mx(p->x), my(*p->high));
    lower = fmt::format("{:.1f},{:.1f} ", mx(p->x), my(*p->low)) + lower;
  }
  if (!upper.empty()) out += fmt::format("<polygon class=\"band\" fill=\"{}\" points=\"{}{}\"/>", colour, upper, lower);
  std::string line;
  for (const XY* p : pts) line += fmt::format("{:.1f},{:.1f} ", mx(p->x), my(p->y));
  out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{} points=\"{}\"/>", colour,
                     s.dashed ? " stroke-dasharray=\"6 4\"" : "", line);
  if (!s.dashed)
    for (const XY* p : pts)
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.6\" fill=\"{}\"><title>{}: {} = {}{}</title></circle>",
                         mx(p->x), my(p->y), colour, html_escape(s.name), html_escape(value_label(p->x, c.x.scale == Scale::log_bytes)),
                         html_escape(format_significant(p->y) + " " + c.y.label), html_escape(p->note.empty() ? "" : " (" + p->note + ")"));
  return out + "</g>";
}

}  // namespace

std::string legend(const std::vector<std::pair<std::string, std::string>>& items, const std::vector<bool>& dashed, int y0) {
  std::string out = "<g class=\"legend\">";
  for (std::size_t i = 0; i < items.size(); ++i) {
    int x = 20 + static_cast<int>(i % 2) * 310, y = y0 + static_cast<int>(i / 2) * 16;
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\"{}/>", x, y - 4, x + 18, y - 4,
                       items[i].second, i < dashed.size() && dashed[i] ? " stroke-dasharray=\"5 3\"" : "");
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>", x + 24, y, html_escape(printable(items[i].first, {.max_chars = 48})));
  }
  return out + "</g>";
}

std::string svg(const LineChart& c) {
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const auto& s : c.series)
    for (const auto& p : s.points) {
      if (!plottable(p, c.x.scale, c.y.scale)) continue;
      x_lo = std::min(x_lo, p.x), x_hi = std::max(x_hi, p.x);
      y_lo = std::min(y_lo, p.y), y_hi = std::max(y_hi, p.y);
      if (p.high) y_hi = std::max(y_hi, *p.high);
      if (p.low && (*p.low > 0 || c.y.scale == Scale::linear)) y_lo = std::min(y_lo, *p.low);
    }
  int legend_rows = static_cast<int>((c.series.size() + 1) / 2);
  int height = kPlotBottom + 52 + 16 * legend_rows;
  std::string out = svg_open(c.id, c.title, kPlotWidth, height);
  if (x_lo > x_hi) {
    out += fmt::format("<text x=\"{}\" y=\"{}\">nothing to plot</text>", kPlotLeft, (kPlotTop + kPlotBottom) / 2);
    return out + "</svg>";
  }
  Mapping mx(c.x.scale, x_lo, x_hi, kPlotLeft, kPlotRight), my(c.y.scale, y_lo, y_hi, kPlotBottom, kPlotTop);
  out += axes(mx, my, c);
  std::vector<std::pair<std::string, std::string>> items;
  std::vector<bool> dashed;
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    out += series_svg(c.series[i], i, mx, my, c);
    items.emplace_back(c.series[i].name, palette(i));
    dashed.push_back(c.series[i].dashed);
  }
  out += legend(items, dashed, kPlotBottom + 52);
  return out + "</svg>";
}

std::string data_table(const LineChart& c) {
  std::set<double> xs;
  for (const auto& s : c.series)
    for (const auto& p : s.points) xs.insert(p.x);
  std::string out = fmt::format("<table class=\"data\"><caption>{} (data)</caption><thead><tr><th scope=\"col\">{}</th>",
                                html_escape(c.title), html_escape(c.x.label));
  for (const auto& s : c.series) out += fmt::format("<th scope=\"col\">{} ({})</th>", html_escape(s.name), html_escape(c.y.label));
  out += "</tr></thead><tbody>";
  for (double x : xs) {
    out += fmt::format("<tr><th scope=\"row\">{}</th>", html_escape(value_label(x, c.x.scale == Scale::log_bytes)));
    for (const auto& s : c.series) {
      auto it = std::find_if(s.points.begin(), s.points.end(), [&](const XY& p) { return p.x == x; });
      std::string cell = it == s.points.end() ? "" : format_significant(it->y) + (it->note.empty() ? "" : " (" + it->note + ")");
      out += "<td>" + html_escape(cell) + "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

}  // namespace interprobe::render::html
