#pragma once
// A small chart kit for the HTML report: plain SVG strings, no script, no fonts fetched. Every
// label passes through html_escape (machine strings reach titles and tooltips). Charts take data
// already extracted from a report, so `compare` can put two reports' series on one chart.
#include <optional>
#include <string>
#include <vector>

namespace interprobe::render::html {

// & < > " ' as entities and controls as \xNN: safe in element text and quoted attributes alike.
std::string html_escape(const std::string& raw);

enum class Scale { log_bytes, log, linear };  // log_bytes: powers-of-two ticks labelled 1K, 1M...

struct Axis {
  std::string label;  // with its unit: "size (bytes)", "GB/s"
  Scale scale = Scale::log;
};

struct XY {
  double x = 0, y = 0;
  std::optional<double> low, high;  // band around y (CV, interval); drawn when present
  std::string note;                 // "extrapolated", "CV 3.1%": in the tooltip and the table
};

struct Series {
  std::string name;
  std::vector<XY> points;
  bool dashed = false;  // a reference (expected link, a ceiling), not a measurement
};

struct LineChart {
  std::string id;  // unique in the page (anchors, clip paths)
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  std::vector<std::string> notes;  // under the chart: what is not measured, what was left out
};

// 100% stacked bars: each bar's parts as shares of its total, the total written above it.
struct BarPart {
  std::string category;
  double value = 0;
  std::string label;  // "1.2 ms (interpolated)"
};
struct Bar {
  std::string name;   // "batch 8"
  std::string total;  // "6.1 ms modeled; 97 ms observed": one line above the bar per "; " part
  std::vector<BarPart> parts;
};
struct StackedBarChart {
  std::string id, title;
  std::string value_label;               // "share of the modeled step"
  std::vector<std::string> categories;   // legend order and colours
  std::vector<Bar> bars;
  std::vector<std::string> notes;
};

struct HeatCell {
  std::string text;     // up to two short lines, split at '\n'
  std::string tooltip;  // the whole story of the cell
  int shade = 0;        // 0 (none, grey) .. 5 (best): a sequential colour
  std::string detail;   // the data table's cell; the tooltip when empty
};
struct Heatmap {
  std::string id, title;
  std::vector<std::string> rows, columns;
  std::vector<std::vector<HeatCell>> cells;  // [row][column]
  std::vector<std::pair<int, std::string>> legend;  // shade -> meaning
  std::vector<std::string> notes;
};

std::string svg(const LineChart& chart);
std::string svg(const StackedBarChart& chart);
std::string svg(const Heatmap& chart);

// The data behind a chart as an HTML table (accessible, copyable).
std::string data_table(const LineChart& chart);
std::string data_table(const StackedBarChart& chart);
std::string data_table(const Heatmap& chart);

// Tick positions of a log axis over [lo, hi]: 1-2-5 per decade when it spans few decades, else
// powers of ten; powers of two (every 2^k, k chosen for ~8 ticks) for bytes.
std::vector<double> log_ticks(double lo, double hi, bool bytes);

}  // namespace interprobe::render::html
