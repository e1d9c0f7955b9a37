#pragma once
// `--format prometheus`: a report's metrics view (model/metrics.hpp) in the Prometheus text
// exposition format (0.0.4) that node_exporter's textfile collector reads. Every family is a gauge
// with one HELP and one TYPE line, its samples together, no timestamps. Names follow Prometheus'
// conventions (issue 36; docs/formats.md, "Metrics for Prometheus", lists them and the old names):
//   - base units in the name, the value converted: bandwidth/.../256MiB/gbps 9.5
//       -> interprobe_bandwidth_bytes_per_second{...,size_bytes="268435456"} 9500000000
//   - labels are identity only (what was measured: path, GPU, size, model...), never a value that
//     changes when a measurement does; those verdicts (bottleneck, roofline bound, telemetry class,
//     P2P truth, provenance, probe status) are state sets: one series per possible value, 1 for
//     the current one, 0 for the others (interprobe_bottleneck_dominant{part=...});
//   - interprobe_report_timestamp_seconds: when the measurement started, from the report;
//   - interprobe_p2p_supported{gpu_a,gpu_b,kind} 0|1 per GPU pair from NVML.
// plus interprobe_info{...} 1, interprobe_probe_ok{probe=...} 1|0 and interprobe_finding{id=...,severity=...} 1.
// The text itself is written by prometheus-cpp's TextSerializer (core library only).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/metrics.hpp"
#include "model/report.hpp"

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

// The families of a report, in a fixed order: interprobe_info, interprobe_report_timestamp_seconds,
// interprobe_probe_ok, then the metrics view's families in the order their first row comes, then
// interprobe_p2p_supported and the state sets (probe status, P2P truth, GEMM bound, telemetry class,
// bottleneck part and provenance), then interprobe_finding. Rows whose value
// is not finite are left out; two rows that would be one series get a `repeat` label.
std::vector<PrometheusFamily> prometheus_families(const report::Report& report);

// The family a metrics-view row belongs to ("interprobe_allreduce_time_seconds"), and the row's
// value in that family's base unit (gbps x 1e9, us / 1e6, ...).
std::string prometheus_family_name(const report::MetricRow& row);
double prometheus_value(const report::MetricRow& row);
// "communication_latency" for a bottleneck row of one step category (family
// interprobe_bottleneck_part_seconds, label part), nothing for other rows.
std::optional<std::string> prometheus_bottleneck_part(const report::MetricRow& row);
// Each family's HELP text by name.
const std::map<std::string, std::string>& prometheus_help_texts();
// A metrics-view label key as a Prometheus label name: [a-zA-Z_][a-zA-Z0-9_]*, never "__..."
// (reserved); `bytes` becomes `size_bytes`.
std::string prometheus_label_name(std::string_view key);
// An untrusted string as a label value before the format's own escaping (backslash, double quote,
// newline): valid UTF-8, controls and invisible format characters as visible \xNN.
std::string prometheus_label_value(std::string_view raw);
// "2026-12-04T14:30:37Z" (the report's host.started_at) as seconds since the Unix epoch; nothing
// when it is not an ISO 8601 UTC time.
std::optional<double> prometheus_epoch_seconds(const std::string& iso8601_utc);

// Whether this build has prometheus-cpp (INTERPROBE_WITH_PROMETHEUS); without it
// require_prometheus and render_prometheus throw InputError saying how to get it.
bool prometheus_available();
void require_prometheus();
std::string render_prometheus(const report::Report& report);

}  // namespace interprobe::render
