// Findings from the bandwidth section: corrupted copies, P2P that is not what it claims,
// links below their expected rate, engines that could not run, noisy measurements.
#include <algorithm>

#include <fmt/format.h>

#include "common/units.hpp"
#include "report/analysis/findings.hpp"
#include "report/model/page_backing.hpp"

namespace interprobe::analysis {

namespace {

using report::Finding;
using report::Severity;
using report::Value;

bool is_p2p(const report::BandwidthSweep& s) { return s.kind.rfind("p2p", 0) == 0 && s.kind != "p2p_off"; }

std::string path_of(const report::BandwidthSweep& s) {
  return fmt::format("{} {} {} {} {}", s.engine, s.kind, s.src, s.directions == 2 ? "<->" : "->", s.dst);
}

// A kind whose rate the link alone decides: pinned copy-engine transfers (pageable memory,
// staging and SM kernels have other limits on top).
bool link_bound(const report::BandwidthSweep& s) {
  bool pinned_host = (s.kind.rfind("h2d", 0) == 0 || s.kind.rfind("d2h", 0) == 0) && s.memory == "pinned";
  return s.engine == "cuda" && s.kind.find("_sm") == std::string::npos && (pinned_host || is_p2p(s));
}

void corrupted_copies(const report::BandwidthSection& b, std::vector<Finding>& out) {
  for (const auto& s : b.sweeps) {
    auto bad = std::find_if(s.points.begin(), s.points.end(), [](const auto& p) { return p.verified == false; });
    if (bad == s.points.end()) continue;
    auto size = static_cast<std::uint64_t>(bad->bytes);
    Finding f;
    f.id = "bandwidth.data_corrupted";
    f.severity = Severity::fail;
    f.title = is_p2p(s) ? fmt::format("P2P reports OK but data is corrupted: {} -> {} at {}", s.src, s.dst, format_bytes(size))
                        : fmt::format("copy delivered wrong data: {} at {}", path_of(s), format_bytes(size));
    f.evidence = {{"engine", s.engine}, {"kind", s.kind}, {"src", s.src}, {"dst", s.dst},
                  {"bytes", static_cast<std::int64_t>(bad->bytes)}};
    f.remedy = is_p2p(s) ? "do not run multi-GPU jobs with P2P on this pair: set NCCL_P2P_DISABLE=1 until fixed; in a VM "
                           "check the P2P clique id (x-nv-gpudirect-clique) and the IOMMU/ACS settings of the host"
                         : "rerun; if it repeats, check memory errors (dmesg, nvidia-smi -q -d ECC) and the IOMMU settings";
    out.push_back(std::move(f));
  }
}

void p2p_verdicts(const report::BandwidthSection& b, std::vector<Finding>& out) {
  for (const auto& p : b.p2p_pairs) {
    if (p.truth != "claimed-but-staged" && p.truth != "staged") continue;
    Finding f;
    f.id = p.truth == "staged" ? "bandwidth.p2p_unavailable" : "bandwidth.p2p_claimed_but_staged";
    f.severity = p.truth == "staged" ? Severity::info : Severity::warn;
    f.title = p.truth == "staged" ? fmt::format("no P2P between {} and {}: copies go through host memory", p.src, p.dst)
                                  : fmt::format("P2P {} -> {} is claimed but behaves like a copy through host memory", p.src, p.dst);
    f.evidence = {{"src", p.src}, {"dst", p.dst}, {"peer_access_claimed", p.peer_access_claimed},
                  {"p2p_gbps", p.p2p_gbps ? Value(*p.p2p_gbps) : Value(nullptr)},
                  {"staged_gbps", p.staged_gbps ? Value(*p.staged_gbps) : Value(nullptr)},
                  {"p2p_latency_us", p.p2p_latency_us ? Value(*p.p2p_latency_us) : Value(nullptr)},
                  {"staged_latency_us", p.staged_latency_us ? Value(*p.staged_latency_us) : Value(nullptr)}};
    f.remedy = "in a VM, pass the GPUs with one P2P clique id (QEMU vfio-pci x-nv-gpudirect-clique=N); on bare metal "
               "check ACS/IOMMU settings and `nvidia-smi topo -p2p r`";
    out.push_back(std::move(f));
  }
}

void below_expected(const report::BandwidthSection& b, std::vector<Finding>& out) {
  for (const auto& s : b.sweeps) {
    if (!link_bound(s) || !s.expected_gbps || *s.expected_gbps <= 0 || s.points.empty()) continue;
    double measured = s.points.back().gbps, ratio = measured / *s.expected_gbps;
    // Protocol overhead leaves ~85-90% of the raw PCIe rate; below 70% something else limits.
    if (ratio >= 0.7) continue;
    Finding f;
    f.id = "bandwidth.below_expected";
    f.severity = Severity::warn;
    f.title = fmt::format("{} reaches {} GB/s, {:.0f}% of the {} GB/s its links allow", path_of(s), format_gbps(measured),
                          100 * ratio, format_gbps(*s.expected_gbps));
    f.evidence = {{"kind", s.kind}, {"src", s.src}, {"dst", s.dst}, {"measured_gbps", measured},
                  {"expected_gbps", *s.expected_gbps}, {"bytes", s.points.back().bytes},
                  {"basis", s.expected_basis ? Value(*s.expected_basis) : Value(nullptr)}};
    f.remedy = "check the host buffer's NUMA node against the GPU's, a downtrained link (topology section), and other "
               "traffic on the same switch";
    out.push_back(std::move(f));
  }
}

void engines_and_sweeps(const report::BandwidthSection& b, std::vector<Finding>& out) {
  for (const auto& e : b.engines) {
    if (e.status != "unsupported" && e.status != "failed") continue;
    Finding f;
    f.id = e.status == "failed" ? "bandwidth.engine_failed" : "bandwidth.engine_unsupported";
    f.severity = e.status == "failed" ? Severity::warn : Severity::info;
    f.title = fmt::format("{} bandwidth not measured: {}", e.engine, e.reason.value_or(e.status));
    f.evidence = {{"engine", e.engine}, {"reason", e.reason ? Value(*e.reason) : Value(nullptr)}};
    f.remedy = e.engine == "cuda" ? "on a GPU machine: install the NVIDIA driver and check `nvidia-smi`; a build without "
                                    "CUDA needs -DINTERPROBE_WITH_CUDA=ON"
                                  : "read the reason; rerun `interprobe bw --engine " + e.engine + "`";
    out.push_back(std::move(f));
  }
  for (const auto& s : b.sweeps) {
    bool capped = std::any_of(s.notes.begin(), s.notes.end(), [](const auto& n) { return n.rfind("sizes capped", 0) == 0; });
    if (s.status == "failed" || s.status == "unsupported" || capped) {
      Finding f;
      f.id = capped && s.status != "failed" && s.status != "unsupported" ? "bandwidth.sizes_capped" : "bandwidth.sweep_incomplete";
      f.severity = f.id == "bandwidth.sizes_capped" ? Severity::info : Severity::warn;
      f.title = f.id == "bandwidth.sizes_capped" ? fmt::format("{}: largest sizes skipped, memory too small", path_of(s))
                                                 : fmt::format("{} {}: {}", path_of(s), s.status, s.reason.value_or(""));
      f.evidence = {{"kind", s.kind}, {"src", s.src}, {"dst", s.dst}, {"status", s.status}};
      f.remedy = "see the sweep's notes; free memory or lower --max, or raise `ulimit -l` for locked buffers";
      out.push_back(std::move(f));
    }
  }
}

void noisy(const report::BandwidthSection& b, std::vector<Finding>& out) {
  std::vector<double> cvs;
  for (const auto& s : b.sweeps)
    for (const auto& p : s.points)
      if (p.bytes >= (1 << 20)) cvs.push_back(p.cv);
  if (cvs.size() < 3) return;
  std::sort(cvs.begin(), cvs.end());
  double median = cvs[cvs.size() / 2];
  if (median <= std::max(0.05, 2 * b.target_cv)) return;
  Finding f;
  f.id = "bandwidth.noisy";
  f.severity = Severity::info;
  f.title = fmt::format("bandwidth samples vary by {:.1f}% (median CV at sizes from 1 MiB): differences below that are noise",
                        100 * median);
  f.evidence = {{"median_cv", median}, {"target_cv", b.target_cv}, {"points", static_cast<std::int64_t>(cvs.size())}};
  f.remedy = "rerun on an idle machine (other processes, frequency scaling and throttling add spread), or give --budget more time";
  out.push_back(std::move(f));
}

// Host buffers that got huge pages for some ranges and not others: rates of one sweep (or of
// two runs) then differ by the page walk, not by the copy path.
void mixed_backing(const report::BandwidthSection& b, std::vector<Finding>& out) {
  for (const auto& s : b.sweeps) {
    auto mixed = report::mixed_page_backing(s);
    if (!mixed) continue;
    Finding f;
    f.id = "bandwidth.mixed_page_backing";
    f.severity = Severity::info;
    f.title = fmt::format("{}: buffers got mixed page backing ({})", path_of(s), *mixed);
    f.evidence = {{"kind", s.kind}, {"src", s.src}, {"dst", s.dst},
                  {"pages", s.pages ? Value(*s.pages) : Value(nullptr)},
                  {"thp_mode", b.thp_mode ? Value(*b.thp_mode) : Value(nullptr)}};
    for (const auto& buffer : s.buffers)
      if (auto fraction = report::huge_page_fraction(buffer)) f.evidence.push_back({buffer.role + "_huge_page_fraction", *fraction});
    f.remedy = "rerun with `--pages 4k` or `--pages 2m` for one backing; inside a VM 2 MiB pages can double a large copy, "
               "so compare runs with the same backing";
    out.push_back(std::move(f));
  }
}

}  // namespace

void rule_bandwidth(const report::Report& r, std::vector<Finding>& out) {
  if (!r.bandwidth) return;
  corrupted_copies(*r.bandwidth, out);
  p2p_verdicts(*r.bandwidth, out);
  below_expected(*r.bandwidth, out);
  engines_and_sweeps(*r.bandwidth, out);
  noisy(*r.bandwidth, out);
  mixed_backing(*r.bandwidth, out);
}

}  // namespace interprobe::analysis
