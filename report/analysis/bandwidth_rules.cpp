// Findings from the bandwidth section: corrupted copies, P2P that is not what it claims, links
// below their expected rate, engines that could not run, noisy measurements. One finding per
// cause: the sweeps or GPU pairs it applies to are its `affected` list, their numbers lists in the
// evidence (same order).
#include <algorithm>

#include <fmt/format.h>

#include "common/units.hpp"
#include "report/analysis/findings.hpp"
#include "model/page_backing.hpp"

namespace interprobe::analysis {

namespace {

using report::BandwidthSweep;
using report::CopyKind;
using report::EngineStatus;
using report::Finding;
using report::P2pTruth;
using report::Severity;
using report::SweepStatus;
using report::Value;
using report::ValueList;

bool is_p2p(const BandwidthSweep& s) { return report::uses_peer_access(s.kind); }

std::string path_of(const BandwidthSweep& s) {
  return fmt::format("{} {} {} {} {}", to_string(s.engine), to_string(s.kind), s.src, s.directions == 2 ? "<->" : "->",
                     s.dst);
}

// A kind whose rate the link alone decides: pinned copy-engine transfers (pageable memory,
// staging and SM kernels have other limits on top).
bool link_bound(const BandwidthSweep& s) {
  bool pinned_host = (s.kind == CopyKind::h2d || s.kind == CopyKind::d2h) && s.memory_kind == report::MemoryKind::pinned;
  return s.engine == report::BandwidthEngine::cuda && !report::is_sm_kernel(s.kind) && (pinned_host || is_p2p(s));
}

// "(cuda p2p_write_ce gpu0 -> gpu1)" for one, "(3 paths)" for more: the list is in `affected`.
std::string which(const std::vector<std::string>& affected, const char* plural) {
  return affected.size() == 1 ? affected.front() : fmt::format("{} {}", affected.size(), plural);
}

void corrupted_copies(const report::BandwidthSection& b, std::vector<Finding>& out) {
  // Two causes: P2P transfers the platform lets through broken, and copies anywhere else.
  for (bool p2p : {true, false}) {
    std::vector<std::string> affected;
    ValueList sizes;
    for (const auto& s : b.sweeps) {
      if (is_p2p(s) != p2p) continue;
      auto bad = std::find_if(s.points.begin(), s.points.end(), [](const auto& p) { return p.verified == false; });
      if (bad == s.points.end()) continue;
      affected.push_back(p2p ? fmt::format("{} -> {}", s.src, s.dst) : path_of(s));
      sizes.push_back(Value(bad->bytes));
    }
    if (affected.empty()) continue;
    const auto first = static_cast<std::uint64_t>(std::get<std::int64_t>(sizes.front()));
    Finding f =
        p2p ? make_finding("bandwidth.p2p_data_corrupted", Severity::fail,
                           fmt::format("P2P reports OK but data is corrupted: {} at {}", which(affected, "GPU pairs"),
                                       format_bytes(first)),
                           "do not run multi-GPU jobs with P2P on these pairs: set NCCL_P2P_DISABLE=1 until fixed; in a "
                           "VM check the P2P clique id (x-nv-gpudirect-clique) and the IOMMU/ACS settings of the host")
            : make_finding("bandwidth.data_corrupted", Severity::fail,
                           fmt::format("copy delivered wrong data: {} at {}", which(affected, "paths"), format_bytes(first)),
                           "rerun; if it repeats, check memory errors (dmesg, nvidia-smi -q -d ECC) and the IOMMU settings");
    f.affected = std::move(affected);
    f.evidence = {{"first_wrong_bytes", sizes}};
    out.push_back(std::move(f));
  }
}

void p2p_verdicts(const report::BandwidthSection& b, std::vector<Finding>& out) {
  for (P2pTruth truth : {P2pTruth::claimed_but_staged, P2pTruth::staged}) {
    std::vector<std::string> affected;
    ValueList claimed, p2p_gbps, staged_gbps, p2p_us, staged_us;
    auto number = [](const std::optional<double>& v) { return v ? Value(*v) : Value(nullptr); };
    for (const auto& p : b.p2p_pairs) {
      if (p.truth != truth) continue;
      affected.push_back(fmt::format("{} -> {}", p.src, p.dst));
      claimed.push_back(Value(p.peer_access_claimed));
      p2p_gbps.push_back(number(p.p2p_gbps));
      staged_gbps.push_back(number(p.staged_gbps));
      p2p_us.push_back(number(p.p2p_latency_us));
      staged_us.push_back(number(p.staged_latency_us));
    }
    if (affected.empty()) continue;
    const std::string pairs = which(affected, "GPU pairs");
    const char* remedy = "in a VM, pass the GPUs with one P2P clique id (QEMU vfio-pci x-nv-gpudirect-clique=N); on bare "
                         "metal check ACS/IOMMU settings and `nvidia-smi topo -p2p r`";
    Finding f = truth == P2pTruth::staged
                    ? make_finding("bandwidth.p2p_unavailable", Severity::info,
                                   fmt::format("no P2P for {}: copies go through host memory", pairs), remedy)
                    : make_finding("bandwidth.p2p_claimed_but_staged", Severity::warn,
                                   fmt::format("P2P {} is claimed but behaves like a copy through host memory", pairs), remedy);
    f.affected = std::move(affected);
    f.evidence = {{"peer_access_claimed", claimed}, {"p2p_gbps", p2p_gbps},          {"staged_gbps", staged_gbps},
                  {"p2p_latency_us", p2p_us},       {"staged_latency_us", staged_us}};
    out.push_back(std::move(f));
  }
}

void below_expected(const report::BandwidthSection& b, std::vector<Finding>& out) {
  std::vector<const BandwidthSweep*> slow;
  for (const auto& s : b.sweeps) {
    if (!link_bound(s) || !s.expected_gbps || *s.expected_gbps <= 0 || s.points.empty()) continue;
    // Protocol overhead leaves ~85-90% of the raw PCIe rate; below 70% something else limits.
    if (s.points.back().gbps / *s.expected_gbps < 0.7) slow.push_back(&s);
  }
  if (slow.empty()) return;
  auto ratio = [](const BandwidthSweep* s) { return s->points.back().gbps / *s->expected_gbps; };
  const auto* worst = *std::min_element(slow.begin(), slow.end(), [&](auto* a, auto* c) { return ratio(a) < ratio(c); });
  std::string title = fmt::format("{} reaches {} GB/s, {:.0f}% of the {} GB/s its links allow", path_of(*worst),
                                  format_gbps(worst->points.back().gbps), 100 * ratio(worst), format_gbps(*worst->expected_gbps));
  if (slow.size() > 1) title = fmt::format("{} paths below 70% of what their links allow; slowest: {}", slow.size(), title);
  Finding f = make_finding("bandwidth.below_expected", Severity::warn, std::move(title),
                           "check the host buffer's NUMA node against the GPU's, a downtrained link (topology section), "
                           "and other traffic on the same switch");
  ValueList measured, expected, bytes, basis;
  for (const auto* s : slow) {
    f.affected.push_back(path_of(*s));
    measured.push_back(Value(s->points.back().gbps));
    expected.push_back(Value(*s->expected_gbps));
    bytes.push_back(Value(s->points.back().bytes));
    basis.push_back(s->expected_basis ? Value(*s->expected_basis) : Value(nullptr));
  }
  f.evidence = {{"measured_gbps", measured}, {"expected_gbps", expected}, {"bytes", bytes}, {"basis", basis}};
  out.push_back(std::move(f));
}

void engines(const report::BandwidthSection& b, std::vector<Finding>& out) {
  for (const auto& e : b.engines) {
    if (e.status != EngineStatus::unsupported && e.status != EngineStatus::failed) continue;
    const bool failed = e.status == EngineStatus::failed;
    const std::string engine = to_string(e.engine);
    Finding f = make_finding(
        failed ? "bandwidth.engine_failed" : "bandwidth.engine_unsupported", failed ? Severity::warn : Severity::info,
        fmt::format("{} bandwidth not measured: {}", engine, e.reason.value_or(to_string(e.status))),
        e.engine == report::BandwidthEngine::cuda
            ? "on a GPU machine: install an NVIDIA driver of CUDA 12.0 (r525) or newer and check `nvidia-smi`, or "
              "point --cuda-lib at its libcuda.so.1"
            : "read the reason; rerun `interprobe bw --engine " + engine + "`");
    f.affected = {engine};
    f.evidence = {{"reason", e.reason ? Value(*e.reason) : Value(nullptr)}};
    out.push_back(std::move(f));
  }
}

void incomplete_sweeps(const report::BandwidthSection& b, std::vector<Finding>& out) {
  std::vector<std::string> incomplete, capped;
  ValueList statuses, reasons;
  for (const auto& s : b.sweeps) {
    if (s.status == SweepStatus::failed || s.status == SweepStatus::unsupported) {
      incomplete.push_back(path_of(s));
      statuses.push_back(Value(std::string(to_string(s.status))));
      reasons.push_back(s.reason ? Value(*s.reason) : Value(nullptr));
    } else if (std::any_of(s.notes.begin(), s.notes.end(), [](const auto& n) { return n.rfind("sizes capped", 0) == 0; })) {
      capped.push_back(path_of(s));
    }
  }
  const char* remedy = "see the sweep's notes; free memory or lower --max, or raise `ulimit -l` for locked buffers";
  if (!incomplete.empty()) {
    Finding f = make_finding(
        "bandwidth.sweep_incomplete", Severity::warn,
        incomplete.size() == 1
            ? fmt::format("{} {}: {}", incomplete.front(), value_to_text(statuses.front()), value_to_text(reasons.front()))
            : fmt::format("{} sweeps failed or could not run", incomplete.size()),
        remedy);
    f.affected = std::move(incomplete);
    f.evidence = {{"status", statuses}, {"reason", reasons}};
    out.push_back(std::move(f));
  }
  if (!capped.empty()) {
    Finding f = make_finding("bandwidth.sizes_capped", Severity::info,
                             fmt::format("{}: largest sizes skipped, memory too small", which(capped, "sweeps")), remedy);
    f.affected = std::move(capped);
    out.push_back(std::move(f));
  }
}

void noisy(const report::BandwidthSection& b, std::vector<Finding>& out) {
  std::vector<double> cvs;
  for (const auto& s : b.sweeps)
    for (const auto& p : s.points)
      if (p.bytes >= (1 << 20)) cvs.push_back(p.cv_fraction);
  if (cvs.size() < 3) return;
  std::sort(cvs.begin(), cvs.end());
  double median = cvs[cvs.size() / 2];
  if (median <= std::max(0.05, 2 * b.target_cv_fraction)) return;
  Finding f = make_finding(
      "bandwidth.noisy", Severity::info,
      fmt::format("bandwidth samples vary by {:.1f}% (median CV at sizes from 1 MiB): differences below that are noise",
                  100 * median),
      "rerun on an idle machine (other processes, frequency scaling and throttling add spread), or give --budget more time");
  f.evidence = {{"median_cv_fraction", median},
                {"target_cv_fraction", b.target_cv_fraction},
                {"points_count", static_cast<std::int64_t>(cvs.size())}};
  out.push_back(std::move(f));
}

// Host buffers that got huge pages for some ranges and not others: rates of one sweep (or of
// two runs) then differ by the page walk, not by the copy path.
// One cause (the kernel granted huge pages to some buffers and not others): one finding.
void mixed_backing(const report::BandwidthSection& b, std::vector<Finding>& out) {
  std::vector<std::string> affected;
  ValueList backing;
  for (const auto& s : b.sweeps)
    if (auto mixed = report::mixed_page_backing(s)) {
      affected.push_back(path_of(s));
      backing.push_back(Value(*mixed));
    }
  if (affected.empty()) return;
  Finding f = make_finding(
      "bandwidth.mixed_page_backing", Severity::info,
      affected.size() == 1 ? fmt::format("{}: buffers got mixed page backing ({})", affected.front(), value_to_text(backing.front()))
                           : fmt::format("{} sweeps' buffers got mixed page backing", affected.size()),
      "rerun with `--pages 4k` or `--pages 2m` for one backing; inside a VM 2 MiB pages can speed a large copy, "
      "so compare runs with the same backing");
  f.affected = std::move(affected);
  f.evidence = {{"backing", backing}, {"thp_mode", b.thp_mode ? Value(std::string(to_string(*b.thp_mode))) : Value(nullptr)}};
  out.push_back(std::move(f));
}

}  // namespace

void rule_bandwidth(const report::Report& r, std::vector<Finding>& out) {
  if (!r.bandwidth) return;
  corrupted_copies(*r.bandwidth, out);
  p2p_verdicts(*r.bandwidth, out);
  below_expected(*r.bandwidth, out);
  engines(*r.bandwidth, out);
  incomplete_sweeps(*r.bandwidth, out);
  noisy(*r.bandwidth, out);
  mixed_backing(*r.bandwidth, out);
}

}  // namespace interprobe::analysis
