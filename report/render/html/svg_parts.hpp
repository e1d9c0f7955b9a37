#pragma once
// Pieces the chart files share (not part of the chart kit's interface).
#include <string>
#include <utility>
#include <vector>

#include "report/render/html/svg_chart.hpp"

namespace interprobe::render::html {

// Value -> pixel on one axis; the domain is widened to nice tick values.
struct Mapping {
  Scale scale;
  double lo = 1, hi = 10, px_from = 0, px_to = 1;
  Mapping(Scale s, double data_lo, double data_hi, double from, double to);
  double operator()(double v) const;
  std::vector<double> ticks() const;
};

const char* palette(std::size_t i);
std::string tick_label(double v, bool bytes);
// <svg ...><title>...</title> and the visible title.
std::string svg_open(const std::string& id, const std::string& title, int width, int height);
// Two columns of (name, colour) swatches starting at y0.
std::string legend(const std::vector<std::pair<std::string, std::string>>& items, const std::vector<bool>& dashed, int y0);

}  // namespace interprobe::render::html
