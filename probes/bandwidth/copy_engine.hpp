#pragma once
// The seam between the sweep engine and whatever moves the bytes. A CopyEngine is one path
// (host memcpy node0 -> node1, CUDA H2D gpu0, P2P gpu0 -> gpu1 ...): the sweep asks it to
// prepare a size, times batches of copies through it, and has it verify the data once.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/bandwidth.hpp"

namespace interprobe {

// The report's name of a path kind the engines spell as text ("memcpy", "p2p_write_ce"). An engine
// that invents a kind the report does not know is a bug, not bad input.
inline report::CopyKind copy_kind(std::string_view name) {
  if (auto kind = report::parse_enum<report::CopyKind>(name)) return *kind;
  throw std::logic_error("copy kind '" + std::string(name) + "' is missing from report::CopyKind");
}

// How the engine's clock wants to be driven.
struct TimingHints {
  double min_sample_us = 200;  // batch small copies until a sample lasts this long
  std::uint64_t max_copies_per_sample = 1u << 20;  // queue limits (CUDA streams) cap batches
};

class CopyEngine {
 public:
  virtual ~CopyEngine() = default;
  // The path, as it will appear in the report (engine, kind, src, dst, memory, threads,
  // directions, notes); points and fit stay empty.
  virtual report::BandwidthSweep describe() const = 0;
  virtual TimingHints timing() const { return {}; }
  // The largest copy this path can do (memory, limits); the sweep caps its sizes to it.
  virtual std::uint64_t max_bytes() const = 0;
  // Called once before the first size with the largest size the sweep will use.
  virtual void reserve(std::uint64_t max_bytes) { (void)max_bytes; }
  // Buffers ready for copies of `bytes`: source filled with a pattern for this size, the
  // destination overwritten so a copy that did not happen cannot verify.
  virtual void prepare(std::uint64_t bytes) = 0;
  // Elapsed microseconds of `copies` back-to-back copies of the prepared size.
  virtual double copy_us(std::uint64_t copies) = 0;
  // After at least one copy: does the destination hold what the source held?
  virtual bool verify() = 0;
  // Frees buffers; the engine may be prepared again afterwards.
  virtual void release() {}
  // Between passes: new buffers faulted in afresh and copy threads started anew, so that each pass sees
  // another placement and the samples pooled over passes carry the placement's share of the
  // run-to-run noise (physical pages decide cache-set conflicts; one allocation per run hides it).
  virtual void replace_buffers() {}
  // CPUs the copy threads ran on since the last prepare() (sched_getcpu); empty when unknown.
  virtual std::vector<int> copy_cpus() const { return {}; }
  // Host buffers of the path and the pages backing them now; empty for engines that do not say.
  virtual std::vector<report::BandwidthBuffer> buffers() const { return {}; }
  // How timing departed from the plan while the sweep ran (a fallback taken, and from which size);
  // the sweep's notes carry them.
  virtual std::vector<std::string> timing_notes() const { return {}; }
};

}  // namespace interprobe
