#pragma once
// One cycle of the CPU clock the calling thread runs at, measured.
#include <cstdint>

namespace interprobe {

// Nanoseconds per cycle: the fastest of several timed chains of dependent register adds (one
// cycle each on every x86 and Arm core). About 2 ms.
double measure_cycle_ns();

// The fastest of `rounds` timings of a chain of `adds` dependent adds, in nanoseconds.
double fastest_add_chain_ns(std::uint64_t adds, int rounds);

}  // namespace interprobe
