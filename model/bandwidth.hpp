#pragma once
// The `bandwidth` section (issue 6): copy sweeps from bytes to gigabytes over every path an
// engine offers (host memcpy, staged copies, CUDA H2D/D2H/D2D/P2P), each with its statistics
// per size and a fit of time = t0 + bytes / bandwidth.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/telemetry.hpp"
#include "model/vocabulary.hpp"

namespace interprobe::report {

enum class BandwidthEngine { host, cuda };
INTERPROBE_DECLARE_ENUM(BandwidthEngine);

// What one sweep copies. host: memcpy between NUMA-placed buffers, staged through a pinned bounce
// buffer. cuda: host<->device (h2d, d2h; _sm = a kernel instead of the copy engine), d2d within a
// GPU, staged_local/staged_remote between GPUs through host memory local/remote to the source, and
// between GPUs p2p_{write,read,bidir}_ce (copy engine), p2p_{write,read}_sm (kernel), p2p_off (peer
// copy with peer access disabled: the driver stages it).
enum class CopyKind {
  memcpy, staged,
  h2d, d2h, d2d, h2d_sm, d2h_sm, staged_local, staged_remote,
  p2p_write_ce, p2p_read_ce, p2p_bidir_ce, p2p_write_sm, p2p_read_sm, p2p_off,
};
INTERPROBE_DECLARE_ENUM(CopyKind);

// The host buffers of a sweep (device: both ends are GPU memory).
enum class MemoryKind { pageable, locked, pinned, device };
INTERPROBE_DECLARE_ENUM(MemoryKind);

enum class SweepStatus { complete, interrupted, failed, unsupported };
INTERPROBE_DECLARE_ENUM(SweepStatus);

enum class EngineStatus { ok, unsupported, failed, interrupted };
INTERPROBE_DECLARE_ENUM(EngineStatus);

// Why sampling of one size stopped (a size cut short by Ctrl-C is not recorded).
// interrupted: Ctrl-C came before every pass over the sizes had visited this one.
enum class StopReason { target_cv, budget, max_samples, interrupted };
INTERPROBE_DECLARE_ENUM(StopReason);

// Whether P2P between two GPUs is real, from what was measured.
enum class P2pTruth { p2p, claimed_but_staged, staged, corrupt };
INTERPROBE_DECLARE_ENUM(P2pTruth);

enum class BandwidthPlan { quick, standard, full, custom };
INTERPROBE_DECLARE_ENUM(BandwidthPlan);

// What probes, rules and views ask of a copy kind.
constexpr bool is_sm_kernel(CopyKind k) {
  return k == CopyKind::h2d_sm || k == CopyKind::d2h_sm || k == CopyKind::p2p_write_sm || k == CopyKind::p2p_read_sm;
}
constexpr bool is_host_to_device(CopyKind k) { return k == CopyKind::h2d || k == CopyKind::h2d_sm; }
constexpr bool is_device_to_host(CopyKind k) { return k == CopyKind::d2h || k == CopyKind::d2h_sm; }
// Between two GPUs through host memory (the driver's staging for p2p_off, ours for staged_*).
constexpr bool is_staged_between_gpus(CopyKind k) {
  return k == CopyKind::staged_local || k == CopyKind::staged_remote || k == CopyKind::p2p_off;
}
// Between two GPUs with peer access on (p2p_off is a peer copy with it off).
constexpr bool uses_peer_access(CopyKind k) {
  return k == CopyKind::p2p_write_ce || k == CopyKind::p2p_read_ce || k == CopyKind::p2p_bidir_ce ||
         k == CopyKind::p2p_write_sm || k == CopyKind::p2p_read_sm;
}
constexpr bool is_gpu_to_gpu(CopyKind k) { return uses_peer_access(k) || is_staged_between_gpus(k); }

// One size of a sweep. Times are per copy (a sample times a batch of copies and divides).
struct BandwidthPoint {
  std::int64_t bytes = 0;
  std::int64_t samples = 0;
  std::int64_t copies_per_sample = 1;
  double min_us = 0, median_us = 0, p95_us = 0, max_us = 0;
  double cv_fraction = 0;  // coefficient of variation of the samples (stddev / mean)
  double gbps = 0;  // bytes x directions / median time, 1e9 bytes/s
  std::optional<bool> verified;  // data compared after the copy; null when not checked
  std::optional<StopReason> stop_reason;
  // 95% interval of the median time per copy (order statistics of the samples, distribution-
  // free); null below 6 samples, where no pair of ranks reaches 95%.
  std::optional<double> median_ci_low_us, median_ci_high_us;
  // The median of each visit (pass) on its own, in visit order; empty with one visit. Passes run at
  // other moments on other buffers: their spread is the run's own view of run-to-run noise.
  std::vector<double> visit_medians_us;
  std::vector<std::int64_t> copy_cpus;  // CPUs the copy threads were seen on (sched_getcpu)
  std::optional<MeasurementTelemetry> telemetry;  // GPU copies with the sampler running; null otherwise
};

enum class HostBufferRole { src, dst, bounce };
INTERPROBE_DECLARE_ENUM(HostBufferRole);

// The madvise policy of host sweep buffers (`bw --pages`): auto = no advice, 4k, 2m.
enum class PagePolicy { automatic, small, huge };
INTERPROBE_DECLARE_ENUM(PagePolicy);

// /sys/kernel/mm/transparent_hugepage/enabled.
enum class ThpMode { always, madvise, never };
INTERPROBE_DECLARE_ENUM(ThpMode);

// A host buffer of a sweep and the pages the kernel backed it with (/proc/self/smaps).
struct BandwidthBuffer {
  HostBufferRole role = HostBufferRole::src;
  std::int64_t bytes = 0;
  std::optional<std::int64_t> huge_page_bytes;  // AnonHugePages of its mapping; null when unreadable
};

struct BandwidthFit {
  double t0_us = 0;                // fixed cost per copy (latency)
  double peak_gbps = 0;            // asymptotic bandwidth of large copies
  std::optional<double> n_half_bytes;  // size that reaches half the peak (t0 x peak)
  double residual_fraction = 0;    // RMS of relative residuals (model vs median time)
  std::int64_t points_used = 0;    // points the fit used
};

struct BandwidthSweep {
  BandwidthEngine engine = BandwidthEngine::host;
  CopyKind kind = CopyKind::memcpy;
  std::string src, dst;  // endpoints: "node0", "gpu1", ...
  std::optional<MemoryKind> memory_kind;
  std::optional<std::int64_t> threads;
  std::int64_t directions = 1;  // 2 for bidirectional sweeps: gbps counts both
  SweepStatus status = SweepStatus::complete;
  std::optional<std::string> reason;  // why it stopped early or failed
  std::vector<std::string> notes;     // capped sizes, placement that could not be honored
  std::vector<BandwidthPoint> points;
  std::optional<BandwidthFit> fit;
  std::optional<double> expected_gbps;  // slowest link on the path, when topology is known
  std::optional<std::string> expected_basis;
  std::optional<PagePolicy> pages;       // host buffers: the page policy asked for
  std::vector<BandwidthBuffer> buffers;  // host buffers with their backing, after the sweep
};

// What one engine could do on this machine: "unsupported" carries the reason.
struct BandwidthEngineStatus {
  BandwidthEngine engine = BandwidthEngine::host;
  EngineStatus status = EngineStatus::ok;
  std::optional<std::string> reason;
  std::vector<std::string> notes;  // e.g. "remote NUMA copies unavailable: 1 NUMA node"
  // Host engine: one cycle of the CPU clock the copies ran at, measured (a chain of dependent
  // adds). Copy loops of a few bytes settle a few cycles apart from one run to the next; compare
  // reads their resolution from this.
  std::optional<double> cycle_ns;
};

struct P2pPairTruth {
  std::string src, dst;
  P2pTruth truth = P2pTruth::p2p;
  bool peer_access_claimed = false;
  std::optional<double> p2p_gbps, staged_gbps;       // at the largest size
  std::optional<double> p2p_latency_us, staged_latency_us;  // at the smallest size
  std::string reason;
};

struct BandwidthSection {
  BandwidthPlan plan = BandwidthPlan::standard;
  double target_cv_fraction = 0.01;
  std::vector<BandwidthEngineStatus> engines;
  std::vector<BandwidthSweep> sweeps;
  std::vector<P2pPairTruth> p2p_pairs;
  std::int64_t passes = 1;  // passes over the sizes (shuffled order), samples pooled per size
  std::optional<ThpMode> thp_mode;
};

}  // namespace interprobe::report
