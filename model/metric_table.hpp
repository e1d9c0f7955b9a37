#pragma once
// The table the sections' metric rows are added to (model/metrics.hpp: the view; each section's
// rows: model/sections.hpp's metric_rows). Only the files that write rows include it.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/metrics.hpp"

namespace interprobe::report {

// A closed vocabulary as its JSON name, for paths and labels.
template <NamedEnum E>
std::string label(E value) {
  return to_string(value);
}

using Labels = std::map<std::string, std::string>;

// "series/256MiB" for a sweep point, the series alone for any other row.
std::string series_and_point(const MetricRow& row);
// A second sweep over the same series in one report is told apart by "#2", "#3", ...
std::string with_repeat(const std::string& path, int repeat);

// Where a row goes: its family, its series, its figure and, for a sweep point, the point.
struct Key {
  std::string family;
  std::string series;
  std::string leaf;
  std::optional<std::int64_t> bytes = std::nullopt;
  std::optional<std::int64_t> tokens = std::nullopt;
};

class MetricTable {
 public:
  // The section is the label every row carries.
  MetricRow& add(Key key, double value, std::string unit, Better better, Labels labels, std::string sweep = {}) {
    MetricRow row;
    row.section = labels.at("section");
    row.family = std::move(key.family);
    row.series = std::move(key.series);
    row.leaf = std::move(key.leaf);
    row.bytes = key.bytes;
    row.tokens = key.tokens;
    row.sweep = std::move(sweep);
    // Paths are unique: a second sweep over the same path (a rerun in one report) gets "#2".
    const std::string path = series_and_point(row) + "/" + row.leaf;
    row.path = path;
    while (!seen_.insert(row.path).second) row.path = with_repeat(path, ++row.repeat);
    row.value = value;
    row.unit = std::move(unit);
    row.better = better;
    row.labels = std::move(labels);
    rows_.push_back(std::move(row));
    return rows_.back();
  }
  template <class T>
  void add_optional(Key key, const std::optional<T>& value, const std::string& unit, Better better, const Labels& labels,
                    const std::string& sweep = {}) {
    if (value) add(std::move(key), static_cast<double>(*value), unit, better, labels, sweep);
  }
  std::vector<MetricRow> take() { return std::move(rows_); }

 private:
  std::vector<MetricRow> rows_;
  std::set<std::string> seen_;
};

}  // namespace interprobe::report
