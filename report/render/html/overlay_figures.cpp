// The curves of several reports on shared charts, for `compare --format html`.
#include <map>

#include "report/render/html/html.hpp"

namespace interprobe::render::html {

std::vector<LineChart> overlay_charts(const std::vector<LabelledReport>& reports, std::size_t baseline) {
  std::vector<LineChart> merged;
  std::map<std::string, std::size_t> by_title;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    std::vector<LineChart> charts = bandwidth_charts(*reports[i].report);
    for (auto& c : collective_charts(*reports[i].report)) charts.push_back(std::move(c));
    for (auto& chart : charts) {
      auto [it, added] = by_title.try_emplace(chart.title, merged.size());
      if (added) {
        LineChart empty = chart;
        empty.id = "cmp-" + chart.id;
        empty.series.clear();
        empty.notes.clear();
        merged.push_back(std::move(empty));
      }
      LineChart& target = merged[it->second];
      for (auto& s : chart.series) {
        if (s.dashed && i != baseline) continue;  // one expected line, not one per report
        s.name = reports[i].label + ": " + s.name;
        target.series.push_back(std::move(s));
      }
      for (auto& note : chart.notes)
        if (i == baseline) target.notes.push_back(std::move(note));
    }
  }
  return merged;
}

}  // namespace interprobe::render::html
