#pragma once
// The `collective` section (issue 5): all-reduce sweeps in the conventions of nccl-tests
// (docs/reference.md §7): algbw = bytes / time, busbw = algbw x 2(n-1)/n, out-of-place and in-place
// per size, every size checked (`wrong_elements` = mismatching elements summed over ranks).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/telemetry.hpp"
#include "model/vocabulary.hpp"

namespace interprobe::report {

enum class AllreduceBackend { nccl, mpi };
INTERPROBE_DECLARE_ENUM(AllreduceBackend);

// Element types, named as nccl-tests prints them: float, half, bfloat16 (probes/collective/dtype.hpp
// encodes them).
enum class Dtype { float32, float16, bfloat16 };
INTERPROBE_DECLARE_ENUM(Dtype);

// NCCL settings a sweep ran under: default, p2p_off (NCCL_P2P_DISABLE=1), shm_off (NCCL_SHM_DISABLE=1).
// The command line spells them p2p-off and shm-off (probes/collective/nccl_environment.hpp).
enum class AllreduceVariant { default_, p2p_off, shm_off };
INTERPROBE_DECLARE_ENUM(AllreduceVariant);

enum class AllreduceStatus { complete, hung, interrupted, failed };
INTERPROBE_DECLARE_ENUM(AllreduceStatus);

// The collective a sweep measured, named as nccl-tests names its tests (all_reduce_perf, ...).
// Byte accounting and bus-bandwidth factors per op: probes/collective/collective_ops.hpp.
enum class CollectiveOp { all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv };
INTERPROBE_DECLARE_ENUM(CollectiveOp);

// One size and placement of a sweep. Times are per all-reduce: a sample times a batch of
// `iterations` back-to-back all-reduces and divides; every rank's sample is taken and the
// slowest rank's counts (the collective ends when the last rank ends).
struct AllreducePoint {
  std::int64_t bytes = 0;
  std::int64_t elements_per_rank = 0;
  Dtype dtype = Dtype::float32;
  bool in_place = false;
  std::int64_t iterations = 0;  // all-reduces per sample
  std::int64_t samples = 0;
  double time_us = 0;  // median over samples
  double min_us = 0, max_us = 0;
  double algbw_gbps = 0;  // bytes / time_us, 1e9 bytes/s
  double busbw_gbps = 0;  // algbw x 2(n-1)/n
  // As nccl-tests reports it: each sample's per-iteration time averaged over the ranks' processes
  // (median over samples), and the busbw of that time. The fields above follow the slowest rank.
  // NCCL driving every GPU from one process measures one time for all of them: the two agree.
  // Null in reports written before schema 2.1.
  std::optional<double> rank_mean_time_us;
  std::optional<double> rank_mean_busbw_gbps;
  std::int64_t wrong_elements = 0;  // elements that differed from the exact sum, over all ranks
  std::optional<MeasurementTelemetry> telemetry;  // the timed samples, with the sampler running
};

// Derived from the out-of-place points. Null when the sweep has too few points to say.
struct AllreduceSummary {
  std::optional<std::int64_t> latency_bytes;  // the smallest size (8 B by default)
  std::optional<double> latency_us;           // its time
  std::optional<double> peak_busbw_gbps;      // the best size
  // Median busbw over the sizes within 10% of the peak; plateau_from_bytes is the smallest of them.
  std::optional<double> plateau_busbw_gbps;
  std::optional<std::int64_t> plateau_from_bytes;
  // The smallest size whose busbw reaches half the plateau (null with one rank: busbw is 0).
  std::optional<std::int64_t> half_plateau_bytes;
  std::int64_t wrong_elements_total = 0;
};

// A transport NCCL connected ("P2P/CUMEM", "SHM/direct/direct", "NET/IB/0"), from its log.
struct CollectiveTransport {
  std::string transport;
  std::int64_t connections = 0;  // channel connections logged with it
};

// The algorithm and protocol NCCL chose for one size, from its TUNING log lines.
struct CollectiveAlgorithm {
  std::int64_t bytes = 0;
  std::string algorithm;  // Ring, Tree, NVLS, CollNetDirect, ... as NCCL spells it
  std::string protocol;   // LL, LL128, Simple
  std::int64_t calls = 0;
};

// One sweep of one collective (the struct keeps the name it had when all-reduce was the only one).
struct AllreduceSweep {
  CollectiveOp collective = CollectiveOp::all_reduce;  // absent before schema 2.6: all_reduce
  AllreduceBackend backend = AllreduceBackend::nccl;
  std::int64_t ranks = 0;
  std::int64_t nodes = 1;
  Dtype dtype = Dtype::float32;
  AllreduceVariant variant = AllreduceVariant::default_;
  std::string op = "sum";  // the reduction; "none" for collectives that only move data
  std::optional<std::string> library_version;  // NCCL "2.28.9", or the MPI library's own line
  std::vector<std::string> devices;            // GPUs used by this process, "0: NAME (BUS ID)"
  std::int64_t warmup_iterations = 0;
  double timeout_s = 0;  // watchdog per size (NCCL); 0 = none
  AllreduceStatus status = AllreduceStatus::complete;
  std::optional<std::string> reason;
  std::optional<std::int64_t> hung_at_bytes;  // size whose collective hung and was aborted
  std::vector<std::string> notes;
  std::map<std::string, std::string> environment;  // NCCL_* variables in force for this sweep
  std::vector<CollectiveTransport> transports;
  std::vector<CollectiveAlgorithm> algorithms;
  std::vector<AllreducePoint> points;
  AllreduceSummary summary;
};

// Which rank's time a figure follows. nccl-tests prints the mean over ranks by default
// (src/common.cu: `static int average = 1;`, "0=RANK0,1=AVG,2=MIN,3=MAX"); the stored `time_us`,
// `algbw_gbps`, `busbw_gbps` and `summary` keep following the slowest rank, as they always have.
enum class RankAggregate { mean, slowest };

// The figures a point is shown by: the mean over ranks where the point has it, else (a report
// written before schema 2.1) the slowest rank's, with `aggregate` saying which.
struct AllreduceHeadline {
  double time_us = 0, algbw_gbps = 0, busbw_gbps = 0;
  RankAggregate aggregate = RankAggregate::slowest;
};
AllreduceHeadline headline_of(const AllreducePoint& p, RankAggregate wanted = RankAggregate::mean);
// True when every point carries the mean over ranks (false for an empty sweep).
bool has_rank_mean(const AllreduceSweep& s);

// Latency, peak, plateau and half-plateau of the out-of-place points (the in-place ones when
// there are none), each point read through headline_of(p, aggregate). The stored summary is
// summarize_points(points, slowest).
AllreduceSummary summarize_points(const std::vector<AllreducePoint>& points, RankAggregate aggregate);

struct CollectiveSection {
  std::vector<AllreduceSweep> allreduce;  // collective all_reduce only
  // Sweeps of the other collectives (all_gather, reduce_scatter, alltoall, broadcast, sendrecv);
  // absent before schema 2.6.
  std::vector<AllreduceSweep> sweeps;
};

}  // namespace interprobe::report
