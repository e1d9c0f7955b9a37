#include "probes/bandwidth/fit.hpp"

#include <algorithm>
#include <cmath>

namespace interprobe {

namespace {

struct Line {
  double intercept = 0, slope = 0;
  bool ok = false;
};

Line weighted_line(const std::vector<TimedSize>& pts, const std::vector<double>& w) {
  double sw = 0, sx = 0, sy = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    sw += w[i];
    sx += w[i] * pts[i].bytes;
    sy += w[i] * pts[i].time_us;
  }
  if (sw <= 0) return {};
  double mx = sx / sw, my = sy / sw, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    double dx = pts[i].bytes - mx;
    sxx += w[i] * dx * dx;
    sxy += w[i] * dx * (pts[i].time_us - my);
  }
  if (sxx <= 0) return {};
  Line l;
  l.slope = sxy / sxx;
  l.intercept = my - l.slope * mx;
  l.ok = std::isfinite(l.slope) && std::isfinite(l.intercept);
  return l;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::optional<report::BandwidthFit> fit_latency_bandwidth(const std::vector<TimedSize>& input) {
  std::vector<TimedSize> pts;
  for (const auto& p : input)
    if (p.bytes > 0 && p.time_us > 0 && std::isfinite(p.time_us)) pts.push_back(p);
  if (pts.size() < 2) return std::nullopt;

  // Iteratively reweighted least squares. The slope comes from absolute times (the largest
  // sizes dominate), t0 from relative errors (the smallest dominate); residuals relative to
  // each point's time feed Tukey's biweight, so a size disturbed by other load stops counting.
  std::vector<double> w(pts.size(), 1.0);
  Line line = weighted_line(pts, w);
  if (!line.ok || !(line.slope > 0)) return std::nullopt;
  auto latency_given = [&](double slope, const std::vector<double>& weights) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      double weight = weights[i] / (pts[i].time_us * pts[i].time_us);
      num += weight * (pts[i].time_us - slope * pts[i].bytes);
      den += weight;
    }
    return std::max(0.0, den > 0 ? num / den : 0.0);
  };
  // Start t0 at the smallest copy: a mean over every size would let sizes that run from a
  // cache (host copies below the last-level cache beat the line by far) drag it to zero.
  auto smallest = std::min_element(pts.begin(), pts.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  double t0_us = std::max(0.0, smallest->time_us - line.slope * smallest->bytes);
  for (int iteration = 0; iteration < 20; ++iteration) {
    std::vector<double> abs_rel(pts.size());
    for (std::size_t i = 0; i < pts.size(); ++i)
      abs_rel[i] = std::fabs((pts[i].time_us - t0_us - line.slope * pts[i].bytes) / pts[i].time_us);
    // Within 5% is never an outlier; off by more than half, a size follows another regime
    // (cache, driver chunking) and does not inform this line.
    double cutoff = std::clamp(4.685 * 1.4826 * median_of(abs_rel), 0.05, 0.5);
    std::vector<double> next_w(pts.size());
    std::size_t kept = 0;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      double u = abs_rel[i] / cutoff;
      next_w[i] = u < 1 ? (1 - u * u) * (1 - u * u) : 0.0;
      kept += next_w[i] > 0;
    }
    if (kept < 2) break;
    Line next = weighted_line(pts, next_w);
    if (!next.ok || !(next.slope > 0)) break;
    bool converged = std::fabs(next.slope - line.slope) <= 1e-12 * std::fabs(line.slope);
    line = next;
    w = std::move(next_w);
    t0_us = latency_given(line.slope, w);
    if (converged) break;
  }

  report::BandwidthFit fit;
  fit.t0_us = t0_us;
  double bytes_per_us = 1.0 / line.slope;
  fit.peak_gbps = bytes_per_us / 1e3;  // 1e6 bytes/s per byte/us, 1e9 bytes/s per GB/s
  if (t0_us > 0) fit.n_half_bytes = t0_us * bytes_per_us;
  double sum_sq = 0;
  std::int64_t used = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (w[i] <= 0) continue;
    double r = (pts[i].time_us - t0_us - line.slope * pts[i].bytes) / pts[i].time_us;
    sum_sq += r * r;
    ++used;
  }
  fit.residual_fraction = used > 0 ? std::sqrt(sum_sq / static_cast<double>(used)) : 0.0;
  fit.points_used = used;  // sizes the line follows; the others were outliers or another regime
  return fit;
}

}  // namespace interprobe
