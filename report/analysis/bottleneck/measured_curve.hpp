#pragma once
// A measured curve y(x) (time over message size, time over M) read back at any x: a measured x
// gives its value, one between two measured points is interpolated in log-log space (bandwidth
// curves are straight there piecewise), and one outside the range is extrapolated: below the
// smallest x at the smallest x's time (a latency floor: less data is not faster), above the
// largest in proportion to x (the last point's bandwidth). Every value says which it is.
#include <optional>
#include <vector>

#include "model/bottleneck.hpp"

namespace interprobe::bottleneck {

using report::Provenance;
// Provenance is ordered from best to worst; a sum of prices is as good as its worst part.
Provenance worst(Provenance a, Provenance b);

struct CurveValue {
  double y = 0;
  Provenance provenance = Provenance::not_measured;
};

class MeasuredCurve {
 public:
  // Points with x <= 0 or y <= 0 are dropped (log space); duplicates of an x keep the smallest y.
  explicit MeasuredCurve(std::vector<std::pair<double, double>> points);

  bool empty() const { return points_.empty(); }
  CurveValue at(double x) const;
  // The y of the smallest x: for an all-reduce, its latency floor.
  std::optional<double> floor_y() const;

 private:
  std::vector<std::pair<double, double>> points_;  // ascending x
};

}  // namespace interprobe::bottleneck
