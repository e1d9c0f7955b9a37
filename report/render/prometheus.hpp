#pragma once
// `--format prometheus`: a report's metrics view (report/model/metrics.hpp) in the Prometheus text
// exposition format (0.0.4) that node_exporter's textfile collector reads. Every family is a gauge
// with one HELP and one TYPE line, its samples together, no timestamps. Names are derived from the
// view's paths and labels by fixed rules (docs/formats.md, "Metrics for Prometheus", lists them):
//   bandwidth/host/memcpy/node0->node0/x1/256MiB/gbps
//     -> interprobe_bandwidth_gbps{dst="node0",engine="host",kind="memcpy",path="host/memcpy/node0->node0/x1",
//                                  size_bytes="268435456",src="node0",threads="1"}
// plus interprobe_info{...} 1, interprobe_probe_ok{probe=...} 1|0 and interprobe_finding{id=...,severity=...} 1.
// The text itself is written by prometheus-cpp's TextSerializer (core library only).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "report/model/metrics.hpp"
#include "report/model/report.hpp"

namespace interprobe::render {

struct PrometheusSample {
  std::map<std::string, std::string> labels;  // names valid, values made printable (see prometheus_label_value)
  double value = 0;
};

struct PrometheusFamily {
  std::string name;  // interprobe_<section>_<what>_<unit>
  std::string help;
  std::vector<PrometheusSample> samples;
};

// The families of a report, in a fixed order: interprobe_info, interprobe_probe_ok, then the
// metrics view's families in the order their first row comes, then interprobe_finding. Rows whose
// value is not finite are left out; two rows that would be one series get a `repeat` label.
std::vector<PrometheusFamily> prometheus_families(const report::Report& report);

// The family a metrics-view row belongs to ("interprobe_allreduce_time_us").
std::string prometheus_family_name(const report::MetricRow& row);
// A metrics-view label key as a Prometheus label name: [a-zA-Z_][a-zA-Z0-9_]*, never "__..."
// (reserved); `bytes` becomes `size_bytes`.
std::string prometheus_label_name(std::string_view key);
// An untrusted string as a label value before the format's own escaping (backslash, double quote,
// newline): valid UTF-8, controls and invisible format characters as visible \xNN.
std::string prometheus_label_value(std::string_view raw);

// Whether this build has prometheus-cpp (INTERPROBE_WITH_PROMETHEUS); without it
// require_prometheus and render_prometheus throw InputError saying how to get it.
bool prometheus_available();
void require_prometheus();
std::string render_prometheus(const report::Report& report);

}  // namespace interprobe::render
