// Grids from the report model: the GPU-pair matrix as a heatmap, and the bottleneck breakdown as
// stacked bars per workload and batch under that workload's verdict.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/units.hpp"
#include "report/render/html/html.hpp"

namespace interprobe::render::html {

namespace {

int path_shade(const report::GpuPair& p) {
  if (p.nvlink_count > 0) return 5;
  switch (p.pcie_path) {
    case report::PciePath::PIX: return 4;
    case report::PciePath::PXB: return 3;
    case report::PciePath::PHB: return 2;
    case report::PciePath::NODE:
    case report::PciePath::SYS: return 1;
    default: return 0;
  }
}

std::string p2p_text(const std::optional<report::P2pStatus>& p) {
  if (!p) return "NVML P2P unknown";
  auto one = [](const std::optional<report::P2pCapability>& c) { return c ? to_string(*c) : std::string("?"); };
  return fmt::format("NVML P2P read {}, write {}, atomics {}, nvlink {}", one(p->read), one(p->write), one(p->atomics), one(p->nvlink));
}

HeatCell pair_cell(const report::GpuPair& p, const report::P2pPairTruth* truth) {
  HeatCell cell;
  cell.shade = path_shade(p);
  cell.text = p.path;
  cell.tooltip = fmt::format("gpu{}-gpu{}: {}, PCIe path {}, {} NVLinks", p.a_index, p.b_index, p.path, to_string(p.pcie_path), p.nvlink_count);
  if (p.bottleneck_gbps) cell.tooltip += fmt::format(", expected {} GB/s from the links (not measured)", format_gbps(*p.bottleneck_gbps));
  cell.tooltip += "; " + p2p_text(p.p2p);
  cell.detail = fmt::format("{}, {} NVLinks{}; P2P read {}", p.path, p.nvlink_count,
                            p.bottleneck_gbps ? fmt::format(", expected {} GB/s", format_gbps(*p.bottleneck_gbps)) : "",
                            p.p2p && p.p2p->read ? to_string(*p.p2p->read) : "unknown");
  if (truth) {
    cell.detail += fmt::format("; measured {}{}", to_string(truth->truth),
                               truth->p2p_gbps ? fmt::format(" {} GB/s", format_gbps(*truth->p2p_gbps)) : "");
    cell.tooltip += fmt::format("; measured: {}", to_string(truth->truth));
    if (truth->p2p_gbps) cell.tooltip += fmt::format(", P2P {} GB/s", format_gbps(*truth->p2p_gbps));
    if (truth->staged_gbps) cell.tooltip += fmt::format(", staged {} GB/s", format_gbps(*truth->staged_gbps));
    cell.text += "\n" + (truth->p2p_gbps ? format_gbps(*truth->p2p_gbps) : to_string(truth->truth));
  } else {
    cell.tooltip += "; P2P not measured";
  }
  return cell;
}

}  // namespace

std::vector<Figure> topology_figures(const report::Report& r) {
  std::vector<Figure> out;
  if (!r.topology || r.topology->gpus.size() < 2) return out;
  const auto& topo = *r.topology;
  Heatmap h{"gpu-pairs", "GPU pairs: path class, NVLinks, P2P", {}, {}, {}, {}, {}};
  std::map<std::int64_t, std::size_t> slot;
  for (const auto& g : topo.gpus) {
    slot[g.index] = h.rows.size();
    h.rows.push_back(fmt::format("GPU{}", g.index));
  }
  h.columns = h.rows;
  h.cells.assign(h.rows.size(), std::vector<HeatCell>(h.rows.size()));
  for (std::size_t i = 0; i < h.rows.size(); ++i) h.cells[i][i] = {"X", "the GPU itself", 0};
  std::map<std::pair<std::string, std::string>, const report::P2pPairTruth*> truths;
  if (r.bandwidth)
    for (const auto& t : r.bandwidth->p2p_pairs) truths[{t.src, t.dst}] = &t;
  for (const auto& p : topo.gpu_pairs) {
    if (!slot.count(p.a_index) || !slot.count(p.b_index)) continue;
    auto a = fmt::format("gpu{}", p.a_index), b = fmt::format("gpu{}", p.b_index);
    auto find = [&](const std::string& s, const std::string& d) {
      auto it = truths.find({s, d});
      return it == truths.end() ? nullptr : it->second;
    };
    h.cells[slot[p.a_index]][slot[p.b_index]] = pair_cell(p, find(a, b));
    h.cells[slot[p.b_index]][slot[p.a_index]] = pair_cell(p, find(b, a) ? find(b, a) : find(a, b));
  }
  h.legend = {{5, "NVLink"}, {4, "PIX: one PCIe switch"}, {3, "PXB: several switches"}, {2, "PHB: host bridge"},
              {1, "NODE/SYS: across host bridges or CPUs"}, {0, "unknown"}};
  h.notes.push_back("table: path, NVLinks, expected GB/s from the links (not measured), NVML P2P read; hover a cell for all of it");
  h.notes.push_back(truths.empty() ? "second line: nothing (P2P bandwidth not measured in this report)"
                                   : "second line: measured P2P GB/s, or the verdict when no P2P rate was measured");
  out.push_back(figure("topology", h));
  return out;
}

namespace {

const char* category_name(report::StepCategory c) {
  switch (c) {
    case report::StepCategory::communication_latency: return "comm latency";
    case report::StepCategory::communication_bandwidth: return "comm bandwidth";
    case report::StepCategory::gemm_memory_bound: return "GEMM memory";
    case report::StepCategory::gemm_compute_bound: return "GEMM compute";
    case report::StepCategory::cache_reads: return "KV reads";
    case report::StepCategory::launch_overhead: return "launches";
  }
  return "?";
}

std::string timed(double us, report::Provenance p) {
  std::string value = us >= 1000 ? fmt::format("{:.2f} ms", us / 1e3) : fmt::format("{:.1f} us", us);
  return p == report::Provenance::measured ? value : value + " (" + to_string(p) + ")";
}

std::string verdict_block(const report::WorkloadEstimate& w, const std::string& id) {
  std::string out = fmt::format("<div class=\"verdict\" id=\"{}\"><p><b>{}, TP {}</b></p><p>{}</p>", html_escape(id),
                                html_escape(w.model), w.tp, html_escape(w.verdict));
  if (w.lever) out += "<p>lever: " + html_escape(*w.lever) + "</p>";
  out += fmt::format("<p class=\"conf-{}\">confidence {}: {}</p>", to_string(w.confidence), html_escape(to_string(w.confidence)),
                     html_escape(w.confidence_reason));
  for (const auto& n : w.not_priced) out += "<p class=\"dim\">not measured: " + html_escape(n) + "</p>";
  return out + "</div>";
}

}  // namespace

std::vector<Figure> bottleneck_figures(const report::Report& r) {
  std::vector<Figure> out;
  if (!r.bottlenecks) return out;
  std::size_t index = 0;
  for (const auto& w : r.bottlenecks->workloads) {
    StackedBarChart c{fmt::format("steps{}", index++), fmt::format("{} at TP {}: decode step by category", w.model, w.tp),
                      "share of the modeled step", {}, {}, {}};
    for (const auto& b : w.batches) {
      Bar bar{fmt::format("batch {}", b.batch), timed(b.modeled_step_us, b.provenance) + " modeled", {}};
      if (b.observed_step_us) bar.total += "; " + timed(*b.observed_step_us, report::Provenance::measured) + " observed";
      for (const auto& cat : b.categories) {
        std::string name = category_name(cat.category);
        if (std::find(c.categories.begin(), c.categories.end(), name) == c.categories.end()) c.categories.push_back(name);
        bar.parts.push_back({name, cat.time_us.value_or(0), cat.time_us ? timed(*cat.time_us, cat.provenance) : "not measured"});
      }
      c.bars.push_back(std::move(bar));
    }
    c.notes.push_back("each bar is 100% of the modeled step at that batch; above it the step time (labelled when not measured)");
    Figure f = figure("bottlenecks", c);
    f.lead = verdict_block(w, "verdict-" + c.id);
    if (w.batches.empty()) f.svg.clear(), f.table.clear();
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace interprobe::render::html
