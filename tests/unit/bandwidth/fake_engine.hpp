#pragma once
// A deterministic copy engine for tests: every copy takes t0 + bytes / bandwidth, optionally
// with a repeatable +-noise pattern, and never touches a clock.
#include <cmath>
#include <cstdint>
#include <functional>

#include "probes/bandwidth/copy_engine.hpp"

namespace interprobe::testing {

class FakeEngine : public CopyEngine {
 public:
  FakeEngine(double t0_us, double gbps) : t0_us_(t0_us), gbps_(gbps) {}

  double noise = 0;          // relative amplitude of the repeatable noise
  double drift_per_call = 0; // each call slower by this fraction of the first: a drifting machine
  double min_sample_us = 200;
  bool corrupt = false;      // verify() fails
  std::int64_t directions = 1;
  std::uint64_t copies_timed = 0, calls = 0, largest_batch = 0;
  std::function<void(std::uint64_t)> on_prepare;
  std::uint64_t replacements = 0;  // replace_buffers() calls
  double slower_after_replacement = 0;  // each replacement makes copies this fraction slower: new pages

  double copy_time_us(std::uint64_t bytes) const {
    return t0_us_ + static_cast<double>(bytes) * static_cast<double>(directions) / (gbps_ * 1e3);
  }

  report::BandwidthSweep describe() const override {
    report::BandwidthSweep s;
    s.engine = report::BandwidthEngine::host;
    s.kind = report::CopyKind::memcpy;
    s.src = "a";
    s.dst = "b";
    s.directions = directions;
    return s;
  }
  TimingHints timing() const override { return {min_sample_us, 1u << 20}; }
  std::uint64_t max_bytes() const override { return 1ull << 40; }
  void prepare(std::uint64_t bytes) override {
    bytes_ = bytes;
    if (on_prepare) on_prepare(bytes);
  }
  double copy_us(std::uint64_t copies) override {
    ++calls;
    copies_timed += copies;
    largest_batch = std::max(largest_batch, copies);
    // Alternating +-noise, a third of it on every third call: a spread that never averages away.
    double wobble = (calls % 2 ? 1.0 : -1.0) * noise * (calls % 3 ? 1.0 : 0.33);
    double drift = 1.0 + drift_per_call * static_cast<double>(calls);
    double placement = 1.0 + slower_after_replacement * static_cast<double>(replacements);
    return static_cast<double>(copies) * copy_time_us(bytes_) * (1.0 + wobble) * drift * placement;
  }
  void replace_buffers() override { ++replacements; }
  bool verify() override { return !corrupt; }

 private:
  double t0_us_, gbps_;
  std::uint64_t bytes_ = 0;
};

}  // namespace interprobe::testing
