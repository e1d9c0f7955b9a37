#include "report/analysis/bottleneck/measured_curve.hpp"

#include <algorithm>
#include <cmath>

namespace interprobe::bottleneck {

namespace {
// Sizes in a report are exact; a relative tolerance only absorbs float formatting.
constexpr double kSameX = 1e-9;
}  // namespace

Provenance worst(Provenance a, Provenance b) { return static_cast<int>(a) > static_cast<int>(b) ? a : b; }

MeasuredCurve::MeasuredCurve(std::vector<std::pair<double, double>> points) {
  for (auto& p : points)
    if (p.first > 0 && p.second > 0 && std::isfinite(p.first) && std::isfinite(p.second)) points_.push_back(p);
  std::sort(points_.begin(), points_.end());
  std::vector<std::pair<double, double>> unique;
  for (const auto& p : points_)
    if (unique.empty() || std::abs(p.first - unique.back().first) > kSameX * p.first) unique.push_back(p);
  points_ = std::move(unique);  // sorted by (x, y): the first of equal x is the smallest y
}

std::optional<double> MeasuredCurve::floor_y() const {
  if (points_.empty()) return std::nullopt;
  return points_.front().second;
}

CurveValue MeasuredCurve::at(double x) const {
  if (points_.empty() || !(x > 0)) return {};
  const auto& first = points_.front();
  const auto& last = points_.back();
  if (x < first.first * (1 - kSameX)) return {first.second, Provenance::extrapolated};
  if (x > last.first * (1 + kSameX)) return {last.second * x / last.first, Provenance::extrapolated};
  auto upper = std::lower_bound(points_.begin(), points_.end(), x * (1 - kSameX),
                                [](const auto& p, double v) { return p.first < v; });
  if (std::abs(upper->first - x) <= kSameX * x) return {upper->second, Provenance::measured};
  const auto& lower = *(upper - 1);
  double t = std::log(x / lower.first) / std::log(upper->first / lower.first);
  double y = std::exp(std::log(lower.second) + t * (std::log(upper->second) - std::log(lower.second)));
  return {y, Provenance::interpolated};
}

}  // namespace interprobe::bottleneck
