#include "model/collective.hpp"

#include <algorithm>

#include "common/statistics.hpp"

namespace interprobe::report {

AllreduceHeadline headline_of(const AllreducePoint& p, RankAggregate wanted) {
  if (wanted == RankAggregate::mean && p.rank_mean_time_us && p.rank_mean_busbw_gbps) {
    const double mean_us = *p.rank_mean_time_us;
    // algbw is bytes / time in every collective's own byte accounting: scale the stored one by the time ratio.
    const double algbw = mean_us > 0 ? p.algbw_gbps * p.time_us / mean_us : 0;
    return {mean_us, algbw, *p.rank_mean_busbw_gbps, RankAggregate::mean};
  }
  return {p.time_us, p.algbw_gbps, p.busbw_gbps, RankAggregate::slowest};
}

bool has_rank_mean(const AllreduceSweep& s) {
  return !s.points.empty() && std::all_of(s.points.begin(), s.points.end(), [](const AllreducePoint& p) {
           return p.rank_mean_time_us && p.rank_mean_busbw_gbps;
         });
}

AllreduceSummary summarize_points(const std::vector<AllreducePoint>& points, RankAggregate aggregate) {
  AllreduceSummary s;
  struct Sized {
    std::int64_t bytes;
    AllreduceHeadline figures;
  };
  std::vector<Sized> out_of_place;
  for (const auto& p : points) {
    s.wrong_elements_total += p.wrong_elements;
    if (!p.in_place) out_of_place.push_back({p.bytes, headline_of(p, aggregate)});
  }
  if (out_of_place.empty()) {  // an in-place-only sweep: summarize that instead
    for (const auto& p : points) out_of_place.push_back({p.bytes, headline_of(p, aggregate)});
  }
  if (out_of_place.empty()) return s;
  std::sort(out_of_place.begin(), out_of_place.end(), [](const Sized& a, const Sized& b) { return a.bytes < b.bytes; });
  s.latency_bytes = out_of_place.front().bytes;
  s.latency_us = out_of_place.front().figures.time_us;
  double peak = 0;
  for (const auto& p : out_of_place) peak = std::max(peak, p.figures.busbw_gbps);
  if (!(peak > 0)) return s;  // one rank: busbw is 0 by definition, there is no plateau
  s.peak_busbw_gbps = peak;
  std::vector<double> plateau;
  for (const auto& p : out_of_place) {
    if (p.figures.busbw_gbps < 0.9 * peak) continue;
    plateau.push_back(p.figures.busbw_gbps);
    if (!s.plateau_from_bytes) s.plateau_from_bytes = p.bytes;
  }
  s.plateau_busbw_gbps = percentile(plateau, 0.5);
  for (const auto& p : out_of_place) {
    if (p.figures.busbw_gbps >= 0.5 * *s.plateau_busbw_gbps) {
      s.half_plateau_bytes = p.bytes;
      break;
    }
  }
  return s;
}

}  // namespace interprobe::report
