#include "probes/bandwidth/cpu_cycle.hpp"

#include <algorithm>
#include <cstdint>

#include "common/stopwatch.hpp"

namespace interprobe {

namespace {

#define INTERPROBE_ADDS_4(op) op op op op
#define INTERPROBE_ADDS_16(op) INTERPROBE_ADDS_4(op) INTERPROBE_ADDS_4(op) INTERPROBE_ADDS_4(op) INTERPROBE_ADDS_4(op)

// `adds` dependent adds of a register, written in assembly where we know the ISA so that no
// optimization level changes the chain: sixteen per trip, so the loop's own counter (in memory
// at -O0) runs beside the chain instead of lengthening it.
std::uint64_t add_chain(std::uint64_t adds, std::uint64_t x) {
  std::uint64_t step = 1;
  for (std::uint64_t i = 0; i < adds; i += 16) {
#if defined(__x86_64__)
    asm volatile(INTERPROBE_ADDS_16("add %1, %0\n\t") : "+r"(x) : "r"(step));
#elif defined(__aarch64__)
    asm volatile(INTERPROBE_ADDS_16("add %0, %0, %1\n\t") : "+r"(x) : "r"(step));
#else
    for (int k = 0; k < 16; ++k) {
      x += step;
      asm volatile("" : "+r"(x));
    }
#endif
  }
  return x;
}

}  // namespace

double fastest_add_chain_ns(std::uint64_t adds, int rounds) {
  double best_ns = 0;
  std::uint64_t x = 0;
  x = add_chain(adds, x);  // the clock ramps up and the code is in cache before the first timing
  for (int round = 0; round < rounds; ++round) {
    Stopwatch clock;
    x = add_chain(adds, x);
    double ns = clock.elapsed_s() * 1e9;
    if (round == 0 || ns < best_ns) best_ns = ns;
  }
  asm volatile("" ::"r"(x));
  return best_ns;
}

double measure_cycle_ns() {
  constexpr std::uint64_t kAdds = 1u << 18;  // ~60 us at 4 GHz: shorter than a timeslice
  return fastest_add_chain_ns(kAdds, 31) / static_cast<double>(kAdds);
}

}  // namespace interprobe
