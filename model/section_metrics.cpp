// The metric rows of the sections whose numbers are read or modeled, not swept: the probes
// themselves, the system, topology, virtualization, telemetry and the bottleneck ranking.
#include <algorithm>

#include <fmt/format.h>

#include "model/metric_table.hpp"
#include "model/sections.hpp"

namespace interprobe::report {

void probe_metric_rows(const Report& r, MetricTable& t) {
  for (const auto& p : r.probes)
    t.add({"probe", "probes/" + p.name, "duration_s"}, p.duration_s, "s", Better::lower,
          {{"section", "probes"}, {"probe", p.name}, {"status", label(p.status)}});
}

void system_metric_rows(const Report& r, MetricTable& t) {
  if (!r.system) return;
  const SystemSection& s = *r.system;
  Labels labels{{"section", "system"}};
  t.add_optional({"system", "system", "logical_cpus"}, s.logical_cpus, "count", Better::neither, labels);
  t.add_optional({"system", "system", "memory_bytes"}, s.memory_bytes, "bytes", Better::neither, labels);
}

void topology_metric_rows(const Report& r, MetricTable& t) {
  if (!r.topology) return;
  const TopologySection& s = *r.topology;
  for (const auto& g : s.gpus) {
    Labels labels{{"section", "topology"}, {"gpu", std::to_string(g.index)}, {"bdf", g.bdf}};
    std::string at = fmt::format("topology/gpus/{}", g.index);
    if (const PciDevice* d = s.device(g.bdf)) {
      t.add_optional({"topology_gpu_link", at + "/link", "current_gts"}, d->link.current_gts, "gts", Better::higher, labels);
      t.add_optional({"topology_gpu_link", at + "/link", "max_gts"}, d->link.max_gts, "gts", Better::higher, labels);
      t.add_optional({"topology_gpu_link", at + "/link", "current_gbps"}, d->link.current_gbps, "gbps", Better::higher, labels);
    }
    t.add_optional({"topology_gpu", at, "memory_bytes"}, g.memory_bytes, "bytes", Better::neither, labels);
  }
  for (const auto& p : s.gpu_pairs) {
    Labels labels{{"section", "topology"}, {"a", std::to_string(p.a_index)}, {"b", std::to_string(p.b_index)},
                  {"path", p.path}, {"pcie_path", label(p.pcie_path)}};
    std::string at = fmt::format("topology/gpu_pairs/{}-{}", p.a_index, p.b_index);
    t.add_optional({"topology_gpu_pair", at, "bottleneck_gbps"}, p.bottleneck_gbps, "gbps", Better::higher, labels);
    t.add_optional({"topology_gpu_pair", at, "pcie_bottleneck_gbps"}, p.pcie_bottleneck_gbps, "gbps", Better::higher, labels);
    t.add({"topology_gpu_pair", at, "nvlink_count"}, static_cast<double>(p.nvlink_count), "count", Better::higher, labels);
  }
  for (const auto& n : s.cpu.numa_nodes)
    t.add_optional({"topology_numa_node", fmt::format("topology/numa_nodes/{}", n.id), "memory_bytes"}, n.memory_bytes, "bytes", Better::neither,
                   {{"section", "topology"}, {"numa_node", std::to_string(n.id)}});
}

void virtualization_metric_rows(const Report& r, MetricTable& t) {
  if (!r.virtualization) return;
  const VirtSection& v = *r.virtualization;
  for (const auto& g : v.gpus)
    t.add_optional({"virtualization_gpu", "virtualization/gpus/" + g.bdf, "bar1_bytes"}, g.bar1_bytes, "bytes", Better::higher,
                   {{"section", "virtualization"}, {"bdf", g.bdf}});
}

// "telemetry/gpu0/utilization_fraction": the whole run's averages per GPU (windows stay in the
// report); the class is a label, so an exporter can count GPUs per class.
void telemetry_metric_rows(const Report& r, MetricTable& t) {
  if (!r.telemetry) return;
  const TelemetrySection& s = *r.telemetry;
  for (const auto& g : s.gpus) {
    const auto& w = g.overall;
    Labels l{{"section", "telemetry"}, {"gpu", std::to_string(g.index)}, {"class", label(w.classification)}, {"rule", w.rule}};
    if (g.bdf) l["bdf"] = *g.bdf;
    std::string at = fmt::format("telemetry/gpu{}", g.index);
    const auto& a = w.averages;
    t.add_optional({"telemetry_gpu", at, "utilization_fraction"}, a.utilization_fraction, "fraction", Better::neither, l);
    t.add_optional({"telemetry_gpu", at, "power_w"}, a.power_w, "w", Better::neither, l);
    t.add_optional({"telemetry_gpu", at, "power_limit_fraction"}, a.power_limit_fraction, "fraction", Better::neither, l);
    t.add_optional({"telemetry_gpu", at, "sm_clock_fraction"}, a.sm_clock_fraction, "fraction", Better::higher, l);
    t.add_optional({"telemetry_gpu", at, "power_cap_time_fraction"}, a.power_cap_time_fraction, "fraction", Better::lower, l);
    t.add_optional({"telemetry_gpu", at, "thermal_time_fraction"}, a.thermal_time_fraction, "fraction", Better::lower, l);
    t.add_optional({"telemetry_gpu", at, "pcie_gbps"}, a.pcie_gbps, "gbps", Better::neither, l);
    t.add_optional({"telemetry_gpu", at, "nvlink_gbps"}, a.nvlink_gbps, "gbps", Better::neither, l);
    t.add_optional({"telemetry_gpu", at, "sm_active_fraction"}, a.sm_active_fraction, "fraction", Better::neither, l);
    t.add_optional({"telemetry_gpu", at, "tensor_active_fraction"}, a.tensor_active_fraction, "fraction", Better::neither, l);
    t.add_optional({"telemetry_gpu", at, "dram_active_fraction"}, a.dram_active_fraction, "fraction", Better::neither, l);
  }
}

// "bottlenecks/meta-llama_Llama-3.1-70B-Instruct/tp8/b64/tokens_per_s": modeled, not measured;
// the labels carry how each number was obtained.
void bottleneck_metric_rows(const Report& r, MetricTable& t) {
  if (!r.bottlenecks) return;
  const BottleneckSection& b = *r.bottlenecks;
  for (const auto& w : b.workloads) {
    std::string model = w.model;
    std::replace(model.begin(), model.end(), '/', '_');
    for (const auto& e : w.batches) {
      std::string at = fmt::format("bottlenecks/{}/tp{}/b{}", model, w.tp, e.batch);
      Labels l{{"section", "bottlenecks"}, {"model", w.model}, {"tp", std::to_string(w.tp)},
               {"batch", std::to_string(e.batch)}, {"provenance", label(e.provenance)}};
      if (e.bottleneck) l["bottleneck"] = label(*e.bottleneck);
      t.add({"bottleneck", at, "modeled_step_us"}, e.modeled_step_us, "us", Better::lower, l);
      t.add({"bottleneck", at, "tokens_per_s"}, e.tokens_per_s, "tokens_per_s", Better::higher, l);
      for (const auto& c : e.categories) {
        Labels cl = l;
        cl["provenance"] = label(c.provenance);
        t.add_optional({"bottleneck", at, label(c.category) + "_us"}, c.time_us, "us", Better::lower, cl);
      }
      t.add_optional({"bottleneck", at, "residual_us"}, e.residual_us, "us", Better::lower, l);
    }
  }
}

}  // namespace interprobe::report
