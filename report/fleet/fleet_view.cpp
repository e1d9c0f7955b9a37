// The fleet report as a document (text, markdown): nodes, the headline table, outliers,
// heterogeneity, the all-reduce across the fleet. Node names and setting values come from the
// machines: raw here, escaped by each renderer.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/units.hpp"
#include "report/fleet/fleet.hpp"

namespace interprobe::fleet {

namespace {

using render::Cell;
using render::Tone;

constexpr std::size_t kTableMetrics = 8;  // columns of the per-node table; the JSON has them all

std::string number(double v) { return v < 0 ? "-" + format_significant(-v) : format_significant(v); }

render::Section summary_section(const FleetReport& f) {
  render::Section s{"fleet", {}};
  render::KeyValues kv;
  auto ok = std::count_if(f.nodes.begin(), f.nodes.end(), [](const FleetNode& n) { return n.ok(); });
  kv.add("nodes", fmt::format("{} ({} ok, {} failed) from {} ranks{}", f.nodes.size(), ok, f.nodes.size() - ok, f.ranks,
                              f.rank_as_node ? "; --rank-as-node: every rank counted as a node (testing)" : ""));
  kv.add("outlier rule", fmt::format("|modified z| > {} (Iglewicz-Hoaglin, 0.6745*(x-median)/MAD; MeanAD when MAD = 0), "
                                     "metrics on >= {} nodes",
                                     kOutlierThreshold, kMinNodesForOutliers));
  std::size_t flagged = 0;
  for (const auto& m : f.outliers) flagged += m.outliers.empty() ? 0 : 1;
  kv.add("outliers", Cell(fmt::format("{} of {} headline metrics", flagged, f.outliers.size()), flagged ? Tone::warn : Tone::good));
  kv.add("heterogeneity", Cell(fmt::format("{} settings differ", f.heterogeneity.size()),
                               f.heterogeneity.empty() ? Tone::good : Tone::warn));
  kv.add("time", fmt::format("probes {:.2f} s (slowest node), gather {:.3f} s, analysis {:.3f} s, cross-node all-reduce {:.2f} s",
                             f.timing.per_node_probes_s, f.timing.gather_s, f.timing.analysis_s,
                             f.timing.cross_node_allreduce_s));
  s.blocks.push_back(std::move(kv));
  return s;
}

render::Section nodes_section(const FleetReport& f) {
  render::Table t{"", {"node", "ranks", "status", "reason"}, {}, {}};
  for (const auto& n : f.nodes) {
    std::string ranks;
    for (auto r : n.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    t.rows.push_back({n.name, ranks, Cell(to_string(n.status), n.ok() ? Tone::good : Tone::bad), n.failure.value_or("")});
  }
  return {"nodes", {std::move(t)}};
}

// "bandwidth/host/memcpy/node0->node0/x1/fit/peak_gbps" -> "memcpy/node0->node0/x1 peak_gbps"
std::string short_name(const std::string& path) {
  std::string p = path;
  for (const char* drop : {"bandwidth/host/", "bandwidth/cuda/", "bandwidth/", "compute/", "collective/", "/fit"})
    if (auto at = p.find(drop); at != std::string::npos) p.erase(at, std::string(drop).size());
  if (auto last = p.rfind('/'); last != std::string::npos) p[last] = ' ';
  return p;
}

render::Section headline_section(const FleetReport& f) {
  render::Section s{"headline metrics per node", {}};
  if (f.outliers.empty()) {
    s.blocks.push_back(render::Paragraph{"no headline metric measured on any node", Tone::dim});
    return s;
  }
  const std::size_t shown = std::min(kTableMetrics, f.outliers.size());
  render::Table t;
  t.header.push_back("node");
  t.align.push_back(render::Align::left);
  for (std::size_t i = 0; i < shown; ++i) {
    t.header.push_back(short_name(f.outliers[i].path));
    t.align.push_back(render::Align::right);
  }
  for (const auto& n : f.nodes) {
    std::vector<Cell> row{n.name};
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& m = f.outliers[i];
      auto it = std::find_if(m.values.begin(), m.values.end(), [&](const NodeValue& v) { return v.node == n.name; });
      if (it == m.values.end()) row.emplace_back("-", Tone::dim);
      else row.emplace_back(number(it->value), it->outlier ? Tone::bad : Tone::plain);
    }
    t.rows.push_back(std::move(row));
  }
  s.blocks.push_back(std::move(t));
  if (f.outliers.size() > shown)
    s.blocks.push_back(render::Paragraph{fmt::format("{} more headline metrics in the JSON report", f.outliers.size() - shown), Tone::dim});
  return s;
}

render::Section outliers_section(const FleetReport& f) {
  render::Section s{"outlier nodes", {}};
  render::Table t{"", {"metric", "unit", "median", "scale", "node", "value", "z"}, {}, {}};
  t.align = {render::Align::left, render::Align::left, render::Align::right, render::Align::left,
             render::Align::left, render::Align::right, render::Align::right};
  for (const auto& m : f.outliers)
    for (const auto& v : m.values)
      if (v.outlier)
        t.rows.push_back({m.path, m.unit, number(m.median), to_string(m.scale), v.node, Cell(number(v.value), Tone::bad),
                          v.z ? fmt::format("{:+.1f}", *v.z) : "-"});
  if (t.rows.empty()) {
    std::size_t scored = std::count_if(f.outliers.begin(), f.outliers.end(), [](const MetricOutliers& m) { return m.scale != Scale::none; });
    s.blocks.push_back(render::Paragraph{
        fmt::format("none: {} of {} headline metrics scored (a metric needs {} nodes with it and some spread)", scored,
                    f.outliers.size(), kMinNodesForOutliers),
        Tone::good});
  } else {
    s.blocks.push_back(std::move(t));
  }
  return s;
}

render::Section heterogeneity_section(const FleetReport& f) {
  render::Section s{"heterogeneity", {}};
  if (f.heterogeneity.empty()) {
    s.blocks.push_back(render::Paragraph{"every node with a report has the same settings, topology and versions", Tone::good});
    return s;
  }
  render::Table t{"", {"setting", "majority", "node", "its value"}, {}, {}};
  for (const auto& h : f.heterogeneity) {
    std::string majority = h.majority ? fmt::format("{} ({} nodes)", *h.majority, h.majority_nodes) : "none (no value on more than half)";
    for (const auto& [node, value] : h.differing) t.rows.push_back({h.name, majority, node, Cell(value, Tone::warn)});
  }
  s.blocks.push_back(std::move(t));
  return s;
}

render::Section collective_section(const FleetReport& f) {
  render::Section s{"all-reduce across the fleet", {}};
  const auto& c = f.collective;
  if (!c.section || c.section->allreduce.empty()) {
    s.blocks.push_back(render::Paragraph{"not measured: " + c.reason.value_or("no sweep"), Tone::dim});
  } else {
    render::Table t{"", {"backend", "ranks", "nodes", "status", "latency us", "peak busbw GB/s", "transport"}, {}, {}};
    for (const auto& sweep : c.section->allreduce) {
      std::string transports;
      for (const auto& tr : sweep.transports) transports += (transports.empty() ? "" : ", ") + tr.transport;
      t.rows.push_back({report::to_string(sweep.backend), std::to_string(sweep.ranks), std::to_string(c.nodes),
                        report::to_string(sweep.status),
                        sweep.summary.latency_us ? number(*sweep.summary.latency_us) : "-",
                        sweep.summary.peak_busbw_gbps ? number(*sweep.summary.peak_busbw_gbps) : "-",
                        transports.empty() ? "see notes" : transports});
    }
    s.blocks.push_back(std::move(t));
  }
  for (const auto& note : c.notes) s.blocks.push_back(render::Paragraph{note, Tone::dim});
  return s;
}

}  // namespace

render::Document fleet_document(const FleetReport& f) {
  render::Document doc{"interprobe fleet report", {}};
  doc.sections.push_back(summary_section(f));
  doc.sections.push_back(nodes_section(f));
  doc.sections.push_back(headline_section(f));
  doc.sections.push_back(outliers_section(f));
  doc.sections.push_back(heterogeneity_section(f));
  doc.sections.push_back(collective_section(f));
  return doc;
}

}  // namespace interprobe::fleet
