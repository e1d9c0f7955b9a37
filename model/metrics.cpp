#include "model/metrics.hpp"

#include <fmt/format.h>

#include "model/metric_table.hpp"
#include "model/sections.hpp"

namespace interprobe::report {

// "series/256MiB" for a sweep point, the series alone for any other row.
std::string series_and_point(const MetricRow& row) {
  std::string point = point_segment(row);
  return point.empty() ? row.series : row.series + "/" + point;
}

// A second sweep over the same series in one report is told apart by "#2", "#3", ...
std::string with_repeat(const std::string& path, int repeat) {
  return repeat > 1 ? fmt::format("{}#{}", path, repeat) : path;
}

std::string size_segment(std::int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::int64_t value = bytes;
  std::size_t unit = 0;
  while (value >= 1024 && value % 1024 == 0 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", value, kUnits[unit]);
}

std::string point_segment(const MetricRow& row) {
  if (row.bytes) return size_segment(*row.bytes);
  if (row.tokens) return fmt::format("m{}", *row.tokens);
  return {};
}

std::optional<std::string> series_path(const MetricRow& row) {
  if (!row.bytes && !row.tokens) return std::nullopt;
  return with_repeat(row.series + "/*/" + row.leaf, row.repeat);
}

std::string point_path(const MetricRow& row) { return with_repeat(series_and_point(row), row.repeat); }

std::span<const EnumName<Better>> names(Better) {
  static constexpr EnumName<Better> table[] = {{Better::higher, "higher"}, {Better::lower, "lower"}, {Better::neither, "neither"}};
  return table;
}

std::vector<MetricRow> metrics_of(const Report& r) {
  MetricTable t;
  for (const auto& section : kSections) section.metric_rows(r, t);
  return t.take();
}

}  // namespace interprobe::report
