// Stacked bars (the bottleneck breakdown) and heatmaps (the GPU-pair matrix), with their tables.
#include <algorithm>

#include <fmt/format.h>

#include "common/text.hpp"
#include "report/render/html/svg_chart.hpp"
#include "report/render/html/svg_parts.hpp"

namespace interprobe::render::html {

namespace {

std::size_t category_index(const StackedBarChart& c, const std::string& category) {
  auto it = std::find(c.categories.begin(), c.categories.end(), category);
  return static_cast<std::size_t>(it - c.categories.begin());
}

const char* shade_colour(int shade) {
  static const char* colours[] = {"#e9ecef", "#deebf7", "#9ecae1", "#6baed6", "#3182bd", "#08519c"};
  return colours[std::clamp(shade, 0, 5)];
}

}  // namespace

std::string svg(const StackedBarChart& c) {
  constexpr int kWidth = 640, kLeft = 60, kRight = 620, kTop = 50, kBottom = 270;
  int legend_rows = static_cast<int>((c.categories.size() + 1) / 2);
  std::string out = svg_open(c.id, c.title, kWidth, kBottom + 40 + 16 * legend_rows);
  Mapping my(Scale::linear, 0, 1, kBottom, kTop);
  out += "<g class=\"axis\">";
  for (int pct = 0; pct <= 100; pct += 25) {
    double y = my(pct / 100.0 / 1.05);  // the mapping pads 5% above 1
    out += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/><text x=\"{3}\" y=\"{4:.1f}\" "
                       "text-anchor=\"end\">{5}%</text>",
                       kLeft, y, kRight, kLeft - 4, y + 4, pct);
  }
  out += fmt::format("<text class=\"al\" transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\">{}</text></g>",
                     (kTop + kBottom) / 2, html_escape(c.value_label));
  double slot = c.bars.empty() ? 1.0 : static_cast<double>(kRight - kLeft) / static_cast<double>(c.bars.size());
  double bar_width = std::min(70.0, slot * 0.6);
  for (std::size_t b = 0; b < c.bars.size(); ++b) {
    const Bar& bar = c.bars[b];
    double total = 0;
    for (const auto& p : bar.parts) total += std::max(0.0, p.value);
    double x = kLeft + slot * (static_cast<double>(b) + 0.5) - bar_width / 2, y = kBottom;
    out += "<g>";
    for (const auto& p : bar.parts) {
      if (!(total > 0) || !(p.value > 0)) continue;
      double share = p.value / total, h = (kBottom - my(1 / 1.05)) * share;
      y -= h;
      out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}: {}, {:.0f}% "
                         "of the step</title></rect>",
                         x, y, bar_width, h, palette(category_index(c, p.category)), html_escape(bar.name + " " + p.category),
                         html_escape(p.label), 100 * share);
    }
    out += fmt::format("<text x=\"{0:.1f}\" y=\"{1}\" text-anchor=\"middle\">{2}</text>", x + bar_width / 2, kBottom + 14,
                       html_escape(bar.name));
    auto lines = split(bar.total, ';');
    for (std::size_t l = 0; l < lines.size() && l < 2; ++l)
      out += fmt::format("<text class=\"small\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}<title>{}</title></text>",
                         x + bar_width / 2, kTop - 20 + 12 * static_cast<int>(l),
                         html_escape(printable(std::string(trim(lines[l])), {.max_chars = 34})), html_escape(bar.total));
    out += "</g>";
  }
  std::vector<std::pair<std::string, std::string>> items;
  for (std::size_t i = 0; i < c.categories.size(); ++i) items.emplace_back(c.categories[i], palette(i));
  out += legend(items, {}, kBottom + 40);
  return out + "</svg>";
}

std::string data_table(const StackedBarChart& c) {
  std::string out = fmt::format("<table class=\"data\"><caption>{} (data)</caption><thead><tr><th scope=\"col\">bar</th>",
                                html_escape(c.title));
  for (const auto& cat : c.categories) out += "<th scope=\"col\">" + html_escape(cat) + "</th>";
  out += "<th scope=\"col\">total</th></tr></thead><tbody>";
  for (const auto& bar : c.bars) {
    out += "<tr><th scope=\"row\">" + html_escape(bar.name) + "</th>";
    for (const auto& cat : c.categories) {
      auto it = std::find_if(bar.parts.begin(), bar.parts.end(), [&](const BarPart& p) { return p.category == cat; });
      out += "<td>" + html_escape(it == bar.parts.end() ? "-" : it->label) + "</td>";
    }
    out += "<td>" + html_escape(bar.total) + "</td></tr>";
  }
  return out + "</tbody></table>";
}

std::string svg(const Heatmap& c) {
  constexpr int kCell = 58, kCellH = 36, kLeft = 70, kTop = 50;
  int width = std::max(360, kLeft + kCell * static_cast<int>(c.columns.size()) + 20);
  int grid_bottom = kTop + kCellH * static_cast<int>(c.rows.size());
  int legend_rows = static_cast<int>((c.legend.size() + 1) / 2);
  std::string out = svg_open(c.id, c.title, width, grid_bottom + 24 + 16 * legend_rows);
  for (std::size_t col = 0; col < c.columns.size(); ++col)
    out += fmt::format("<text class=\"al\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", kLeft + kCell * static_cast<int>(col) + kCell / 2,
                       kTop - 6, html_escape(printable(c.columns[col], {.max_chars = 10})));
  for (std::size_t row = 0; row < c.rows.size(); ++row) {
    int y = kTop + kCellH * static_cast<int>(row);
    out += fmt::format("<text class=\"al\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", kLeft - 6, y + kCellH / 2 + 4,
                       html_escape(printable(c.rows[row], {.max_chars = 10})));
    for (std::size_t col = 0; col < c.columns.size() && row < c.cells.size() && col < c.cells[row].size(); ++col) {
      const HeatCell& cell = c.cells[row][col];
      int x = kLeft + kCell * static_cast<int>(col);
      out += fmt::format("<g><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#fff\"/><title>{}</title>", x, y,
                         kCell, kCellH, shade_colour(cell.shade), html_escape(cell.tooltip));
      auto lines = split(cell.text, '\n');
      for (std::size_t l = 0; l < lines.size() && l < 2; ++l)
        out += fmt::format("<text class=\"cell{}\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", cell.shade >= 4 ? " inv" : "",
                           x + kCell / 2, y + (lines.size() > 1 ? 15 + 13 * static_cast<int>(l) : kCellH / 2 + 4),
                           html_escape(printable(lines[l], {.max_chars = 9})));
      out += "</g>";
    }
  }
  std::string legend_svg = "<g class=\"legend\">";
  for (std::size_t i = 0; i < c.legend.size(); ++i) {
    int x = 20 + static_cast<int>(i % 2) * 300, y = grid_bottom + 24 + static_cast<int>(i / 2) * 16;
    legend_svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>", x, y - 9,
                              shade_colour(c.legend[i].first), x + 20, y, html_escape(c.legend[i].second));
  }
  return out + legend_svg + "</g></svg>";
}

std::string data_table(const Heatmap& c) {
  std::string out = fmt::format("<table class=\"data\"><caption>{} (data)</caption><thead><tr><th></th>", html_escape(c.title));
  for (const auto& col : c.columns) out += "<th scope=\"col\">" + html_escape(col) + "</th>";
  out += "</tr></thead><tbody>";
  for (std::size_t row = 0; row < c.rows.size(); ++row) {
    out += "<tr><th scope=\"row\">" + html_escape(c.rows[row]) + "</th>";
    for (std::size_t col = 0; col < c.columns.size(); ++col) {
      std::string text;
      if (row < c.cells.size() && col < c.cells[row].size())
        text = c.cells[row][col].detail.empty() ? c.cells[row][col].tooltip : c.cells[row][col].detail;
      out += "<td>" + html_escape(text) + "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

}  // namespace interprobe::render::html
