#pragma once
// The `bandwidth` section (issue 6): copy sweeps from bytes to gigabytes over every path an
// engine offers (host memcpy, staged copies, CUDA H2D/D2H/D2D/P2P), each with its statistics
// per size and a fit of time = t0 + bytes / bandwidth.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace interprobe::report {

// One size of a sweep. Times are per copy (a sample times a batch of copies and divides).
struct BandwidthPoint {
  std::int64_t bytes = 0;
  std::int64_t samples = 0;
  std::int64_t copies_per_sample = 1;
  double min_us = 0, median_us = 0, p95_us = 0, max_us = 0;
  double cv = 0;    // coefficient of variation of the samples (stddev / mean)
  double gbps = 0;  // bytes x directions / median time, 1e9 bytes/s
  std::optional<bool> verified;  // data compared after the copy; null when not checked
  std::optional<std::string> stop_reason;  // "target_cv", "budget", "max_samples", "interrupted"
  // 95% interval of the median time per copy (order statistics of the samples, distribution-
  // free); null below 6 samples, where no pair of ranks reaches 95%.
  std::optional<double> median_ci_low_us, median_ci_high_us;
  std::vector<std::int64_t> copy_cpus;  // CPUs the copy threads were seen on (sched_getcpu)
};

// A host buffer of a sweep and the pages the kernel backed it with (/proc/self/smaps).
struct BandwidthBuffer {
  std::string role;  // src | dst | bounce
  std::int64_t bytes = 0;
  std::optional<std::int64_t> huge_page_bytes;  // AnonHugePages of its mapping; null when unreadable
};

struct BandwidthFit {
  double t0_us = 0;                // fixed cost per copy (latency)
  double peak_gbps = 0;            // asymptotic bandwidth of large copies
  std::optional<double> n_half_bytes;  // size that reaches half the peak (t0 x peak)
  double residual = 0;             // RMS of relative residuals (model vs median time)
  std::int64_t points = 0;         // points the fit used
};

struct BandwidthSweep {
  std::string engine;  // host | cuda
  std::string kind;    // host: memcpy, staged; cuda: h2d, d2h, d2d, p2p_write, ...
  std::string src, dst;  // endpoints: "node0", "gpu1", ...
  std::optional<std::string> memory;  // host buffers: pageable | locked | pinned
  std::optional<std::int64_t> threads;
  std::int64_t directions = 1;  // 2 for bidirectional sweeps: gbps counts both
  std::string status = "complete";  // complete | interrupted | failed | unsupported
  std::optional<std::string> reason;  // why it stopped early or failed
  std::vector<std::string> notes;     // capped sizes, placement that could not be honored
  std::vector<BandwidthPoint> points;
  std::optional<BandwidthFit> fit;
  std::optional<double> expected_gbps;  // slowest link on the path, when topology is known
  std::optional<std::string> expected_basis;
  std::optional<std::string> pages;      // host buffers: page policy asked for (auto | 4k | 2m)
  std::vector<BandwidthBuffer> buffers;  // host buffers with their backing, after the sweep
};

// What one engine could do on this machine: "unsupported" carries the reason.
struct BandwidthEngineStatus {
  std::string engine;
  std::string status = "ok";  // ok | unsupported | failed | interrupted
  std::optional<std::string> reason;
  std::vector<std::string> notes;  // e.g. "remote NUMA copies unavailable: 1 NUMA node"
};

// Whether P2P between two GPUs is real, from what was measured.
struct P2pPairTruth {
  std::string src, dst;
  std::string truth;  // p2p | claimed-but-staged | staged | corrupt
  bool peer_access_claimed = false;
  std::optional<double> p2p_gbps, staged_gbps;       // at the largest size
  std::optional<double> p2p_latency_us, staged_latency_us;  // at the smallest size
  std::string reason;
};

struct BandwidthSection {
  std::string plan;  // quick | full | custom
  double target_cv = 0.01;
  std::vector<BandwidthEngineStatus> engines;
  std::vector<BandwidthSweep> sweeps;
  std::vector<P2pPairTruth> p2p_pairs;
  std::int64_t passes = 1;  // passes over the sizes (shuffled order), samples pooled per size
  std::optional<std::string> thp_mode;  // transparent huge pages: always | madvise | never
};

}  // namespace interprobe::report
