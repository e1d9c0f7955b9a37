#include "report/render/prometheus.hpp"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/text.hpp"
#include "interprobe/build_config.hpp"
#include "report/render/document.hpp"

#if INTERPROBE_HAVE_PROMETHEUS
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>
#endif

namespace interprobe::render {

namespace {

using Labels = std::map<std::string, std::string>;

std::string help_of(const std::string& family, const std::string& unit) {
  const auto& help = prometheus_help_texts();
  if (auto it = help.find(family); it != help.end()) return it->second;
  return fmt::format("interprobe report metric, unit {}", unit);  // a row kind newer than this table
}

// The families being built: each name once, in the order it first came; each series once.
class FamilyTable {
 public:
  void add(const std::string& name, const std::string& help, std::map<std::string, std::string> labels, double value) {
    if (!std::isfinite(value)) return;
    auto [it, inserted] = index_.try_emplace(name, families_.size());
    if (inserted) families_.push_back({name, help, {}});
    std::string key = series_key(name, labels);
    for (int n = 2; !series_.insert(key).second; ++n) {
      labels["repeat"] = std::to_string(n);
      key = series_key(name, labels);
    }
    families_[it->second].samples.push_back({std::move(labels), value});
  }
  std::vector<PrometheusFamily> take() { return std::move(families_); }

 private:
  static std::string series_key(const std::string& name, const std::map<std::string, std::string>& labels) {
    std::string key = name;
    for (const auto& [k, v] : labels) key += fmt::format("\x1f{}\x1e{}", k, v);
    return key;
  }
  std::vector<PrometheusFamily> families_;
  std::map<std::string, std::size_t> index_;
  std::set<std::string> series_;
};


void add_info(const report::Report& r, FamilyTable& t) {
  std::map<std::string, std::string> labels{{"version", prometheus_label_value(r.tool.version)},
                                            {"schema_version", prometheus_label_value(r.schema_version)},
                                            {"live", r.host.live ? "true" : "false"}};
  bool simulated = false;
  for (const auto& [name, lib] : r.tool.libraries) simulated = simulated || lib.simulated.has_value();
  labels["simulated"] = simulated ? "true" : "false";
  labels["constructed"] = constructed_parts(r).empty() ? "false" : "true";
  if (const auto& v = r.virtualization) {
    labels["hypervisor"] = prometheus_label_value(v->hypervisor);
    labels["container"] = prometheus_label_value(v->container);
    if (v->machine_type) labels["machine_type"] = prometheus_label_value(*v->machine_type);
    if (v->product) labels["product"] = prometheus_label_value(*v->product);
  }
  t.add("interprobe_info", help_of("interprobe_info", ""), std::move(labels), 1);
}

// The view's labels that are verdicts on what was measured, not what was measured: they change
// when a measurement does, so in Prometheus they are state sets of their own (add_state_sets),
// never labels of a number. `rule` (the telemetry rule that decided a class) is in the report only;
// topology's `path` ("NV18") holds the NVLink count, which has a gauge of its own.
bool moving_label(const std::string& section, const std::string& key) {
  static const std::set<std::string> verdicts{"section", "status", "truth", "bound", "class", "rule", "bottleneck"};
  if (verdicts.count(key)) return true;
  if (section == "bottlenecks" && key == "provenance") return true;  // expected bandwidth's is constant
  return section == "topology" && key == "path";
}

void add_rows(const std::vector<report::MetricRow>& rows, FamilyTable& t) {
  for (const auto& row : rows) {
    Labels labels;
    for (const auto& [key, value] : row.labels)
      if (!moving_label(row.section, key)) labels[prometheus_label_name(key)] = prometheus_label_value(value);
    // A bandwidth sweep's own path ("host/memcpy/node0->node0/x1") on its points, fit and expected rate.
    if (!row.sweep.empty()) labels["path"] = prometheus_label_value(row.sweep);
    if (auto part = prometheus_bottleneck_part(row)) labels["part"] = *part;
    std::string name = prometheus_family_name(row);
    t.add(name, help_of(name, row.unit), std::move(labels), prometheus_value(row));
  }
}

// A closed vocabulary as a state set: one series per value, 1 for `current` (none when null).
template <report::NamedEnum E>
void add_state_set(FamilyTable& t, const std::string& family, const Labels& identity, const std::string& state_label,
                   std::optional<E> current) {
  for (const auto& entry : names(E{})) {
    Labels labels = identity;
    labels[state_label] = entry.name;
    t.add(family, help_of(family, ""), std::move(labels), current == entry.value ? 1 : 0);
  }
}

// NVML's P2P status per GPU pair and capability, as 0|1 gauges a dashboard can count.
void add_p2p_support(const report::TopologySection& s, FamilyTable& t) {
  for (const auto& p : s.gpu_pairs) {
    if (!p.p2p) continue;
    const std::pair<const char*, const std::optional<report::P2pCapability>&> kinds[] = {
        {"read", p.p2p->read}, {"write", p.p2p->write}, {"atomics", p.p2p->atomics}, {"nvlink", p.p2p->nvlink}};
    for (const auto& [kind, status] : kinds)
      if (status)
        t.add("interprobe_p2p_supported", help_of("interprobe_p2p_supported", ""),
              {{"gpu_a", std::to_string(p.a_index)}, {"gpu_b", std::to_string(p.b_index)}, {"kind", kind}},
              *status == report::P2pCapability::ok ? 1 : 0);
  }
}

// The verdicts moving_label keeps out of the numbers' labels, each with the identity labels of
// the numbers it belongs to (the same keys and spellings as model/metrics.cpp gives them).
void add_state_sets(const report::Report& r, FamilyTable& t) {
  using report::to_string;
  for (const auto& p : r.probes)
    add_state_set(t, "interprobe_probe_status", {{"probe", prometheus_label_value(p.name)}}, "status", std::optional(p.status));
  if (r.bandwidth)
    for (const auto& p : r.bandwidth->p2p_pairs)
      add_state_set(t, "interprobe_p2p_truth", {{"src", prometheus_label_value(p.src)}, {"dst", prometheus_label_value(p.dst)}},
                    "truth", std::optional(p.truth));
  if (r.compute)
    for (const auto& e : r.compute->engines)
      for (const auto& p : e.points)
        add_state_set(t, "interprobe_compute_gemm_bound",
                      {{"engine", to_string(e.engine)}, {"dtype", to_string(p.dtype)}, {"shape", prometheus_label_value(p.shape)},
                       {"m", std::to_string(p.m)}, {"n", std::to_string(p.n)}, {"k", std::to_string(p.k)}},
                      "bound", p.bound);
  if (r.telemetry)
    for (const auto& g : r.telemetry->gpus) {
      Labels identity{{"gpu", std::to_string(g.index)}};
      if (g.bdf) identity["bdf"] = prometheus_label_value(*g.bdf);
      add_state_set(t, "interprobe_telemetry_gpu_class", identity, "class", std::optional(g.overall.classification));
    }
  if (r.bottlenecks)
    for (const auto& w : r.bottlenecks->workloads)
      for (const auto& b : w.batches) {
        Labels identity{{"model", prometheus_label_value(w.model)}, {"tp", std::to_string(w.tp)}, {"batch", std::to_string(b.batch)}};
        add_state_set(t, "interprobe_bottleneck_dominant", identity, "part", b.bottleneck);
        Labels step = identity;
        step["part"] = "step";
        add_state_set(t, "interprobe_bottleneck_provenance", step, "provenance", std::optional(b.provenance));
        for (const auto& c : b.categories) {
          Labels part = identity;
          part["part"] = to_string(c.category);
          add_state_set(t, "interprobe_bottleneck_provenance", part, "provenance", std::optional(c.provenance));
        }
      }
}

}  // namespace

std::optional<double> prometheus_epoch_seconds(const std::string& iso8601_utc) {
  std::tm tm{};
  const char* end = strptime(iso8601_utc.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end) return std::nullopt;
  double fraction = 0;
  if (*end == '.') {  // "…:37.25Z"
    char* after = nullptr;
    fraction = std::strtod(end, &after);
    end = after;
  }
  if (std::string_view(end) != "Z") return std::nullopt;
  return static_cast<double>(timegm(&tm)) + fraction;
}

std::vector<PrometheusFamily> prometheus_families(const report::Report& r) {
  FamilyTable t;
  add_info(r, t);
  if (auto started = prometheus_epoch_seconds(r.host.started_at))
    t.add("interprobe_report_timestamp_seconds", help_of("interprobe_report_timestamp_seconds", ""), {}, *started);
  auto rows = report::metrics_of(r);
  for (const auto& row : rows) {
    auto probe = row.labels.find("probe");
    auto status = row.labels.find("status");
    if (row.section != "probes" || probe == row.labels.end() || status == row.labels.end()) continue;
    t.add("interprobe_probe_ok", help_of("interprobe_probe_ok", ""), {{"probe", prometheus_label_value(probe->second)}},
          status->second == "ok" ? 1 : 0);
  }
  add_rows(rows, t);
  if (r.topology) add_p2p_support(*r.topology, t);
  add_state_sets(r, t);
  for (const auto& f : r.findings)
    t.add("interprobe_finding", help_of("interprobe_finding", ""),
          {{"id", prometheus_label_value(f.id)}, {"severity", std::string(report::to_string(f.severity))}}, 1);
  return t.take();
}

bool prometheus_available() { return INTERPROBE_HAVE_PROMETHEUS != 0; }

void require_prometheus() {
  if (prometheus_available()) return;
  throw InputError(
      "--format prometheus: this interprobe was built without prometheus-cpp; install it (apt-get install "
      "prometheus-cpp-dev) and rebuild, or save the report with -o and render it with a build that has it");
}

std::string render_prometheus(const report::Report& r) {
#if INTERPROBE_HAVE_PROMETHEUS
  std::vector<prometheus::MetricFamily> families;
  for (auto& f : prometheus_families(r)) {
    prometheus::MetricFamily family{f.name, f.help, prometheus::MetricType::Gauge, {}};
    for (auto& s : f.samples) {
      prometheus::ClientMetric metric;
      for (auto& [name, value] : s.labels) metric.label.push_back({name, value});
      metric.gauge.value = s.value;
      family.metric.push_back(std::move(metric));  // timestamp_ms stays 0: no timestamp is written
    }
    families.push_back(std::move(family));
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
#else
  (void)r;
  require_prometheus();  // throws
  return {};
#endif
}

}  // namespace interprobe::render
