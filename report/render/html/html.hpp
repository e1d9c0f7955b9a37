#pragma once
// `--format html`: one self-contained page (inline CSS and SVG, no script, nothing fetched) made of
// the same Document the text and markdown views build, with charts drawn from the report model
// above the sections they illustrate, each beside a table of its data.
#include <string>
#include <vector>

#include "model/report.hpp"
#include "report/render/document.hpp"
#include "report/render/html/svg_chart.hpp"

namespace interprobe::render::html {

// A chart ready for the page: goes under the first Document section whose title starts with
// `section`, its data table beside it.
struct Figure {
  std::string section;
  std::string lead;  // HTML above the chart (already escaped): the verdict block of a workload
  std::string svg, table;
  std::vector<std::string> notes;  // raw text: what is not measured, what was left out
};

template <class Chart>
Figure figure(std::string section, const Chart& chart) {
  Figure f{std::move(section), "", svg(chart), data_table(chart), chart.notes};
  return f;
}

// The charts of one report, per section (report_figures.cpp, report_figures_grid.cpp). `compare`
// builds its own from two reports' series with the same chart kit.
std::vector<Figure> bandwidth_figures(const report::Report& r);
// The line charts behind those figures, for overlays.
std::vector<LineChart> bandwidth_charts(const report::Report& r);
std::vector<LineChart> collective_charts(const report::Report& r);
// Several reports' curves on one chart each (compare): charts of the same title merged, every
// series named "<label>: <series>"; dashed references only from the baseline's.
struct LabelledReport {
  std::string label;
  const report::Report* report = nullptr;
};
std::vector<LineChart> overlay_charts(const std::vector<LabelledReport>& reports, std::size_t baseline);
std::vector<Figure> collective_figures(const report::Report& r);
std::vector<Figure> compute_figures(const report::Report& r);
std::vector<Figure> topology_figures(const report::Report& r);
std::vector<Figure> bottleneck_figures(const report::Report& r);

// The page: the document's sections in order, each figure above the section it names; a figure
// whose section is absent goes at the end. The title is raw text.
std::string page(const Document& doc, const std::vector<Figure>& figures);

// A Document section or block as HTML (escaped).
std::string section_html(const Section& s);

}  // namespace interprobe::render::html

namespace interprobe::render {

std::string render_html(const report::Report& report, const ViewOptions& views = {});

}  // namespace interprobe::render
