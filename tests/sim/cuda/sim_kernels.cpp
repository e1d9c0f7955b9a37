#include "sim_kernels.hpp"

#include <array>
#include <chrono>
#include <cstring>
#include <cstdint>
#include <regex>
#include <thread>

#include "probes/bandwidth/pattern.hpp"
#include "sim_state.hpp"

namespace interprobe::sim {

int max_ptx_isa(int driver_version) {
  // CUDA 12.0 -> 8.0 ... 12.5 -> 8.5, 12.6 -> 8.5, 12.8 -> 8.7, 12.9 -> 8.8, 13.0 -> 9.0.
  static const std::pair<int, int> table[] = {{13000, 90}, {12090, 88}, {12080, 87}, {12050, 85}, {12040, 84},
                                              {12030, 83}, {12020, 82}, {12010, 81}, {12000, 80}, {11080, 78}};
  for (auto [version, isa] : table)
    if (driver_version >= version) return isa;
  return 70;
}

int ptx_isa_of(const std::string& ptx) {
  static const std::regex version(R"(\.version\s+(\d+)\.(\d+))");
  std::smatch m;
  if (!std::regex_search(ptx, m, version)) return -1;
  return std::stoi(m[1]) * 10 + std::stoi(m[2]);
}

std::vector<std::string> ptx_entries(const std::string& ptx) {
  static const std::regex entry(R"(\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*))");
  std::vector<std::string> out;
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), entry), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

bool kernel_by_name(const std::string& name, Kernel& out) {
  static const std::pair<const char*, Kernel> known[] = {{"interprobe_hold", Kernel::hold},
                                                         {"interprobe_copy", Kernel::copy},
                                                         {"interprobe_fill_pattern", Kernel::fill_pattern},
                                                         {"interprobe_count_mismatches", Kernel::count_mismatches},
                                                         {"interprobe_stream_read", Kernel::stream_read},
                                                         {"interprobe_empty", Kernel::empty}};
  for (auto [n, k] : known)
    if (name == n) {
      out = k;
      return true;
    }
  return false;
}

int parameter_count(Kernel k) {
  switch (k) {
    case Kernel::count_mismatches: return 4;
    case Kernel::empty: return 0;
    default: return 3;
  }
}

namespace {

template <class T>
T arg(void** params, int i) {
  return *static_cast<T*>(params[i]);
}

// hold(const volatile int* flag, int* timed_out, u64 timeout_ns): spins on a host flag.
void hold(void** params, Stream* stream) {
  auto* flag = arg<int*>(params, 0);
  auto* timed_out = arg<int*>(params, 1);
  auto timeout_ns = arg<std::uint64_t>(params, 2);
  double deadline = now_s() + static_cast<double>(timeout_ns) * 1e-9;
  while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) {
    if (now_s() > deadline) {
      __atomic_store_n(timed_out, 1, __ATOMIC_RELEASE);
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  if (stream) stream->clock_s = std::max(stream->clock_s, now_s());
}

void copy(void** params, Stream* stream, int device) {
  auto* dst = arg<unsigned char*>(params, 0);
  auto* src = arg<const unsigned char*>(params, 1);
  auto bytes = arg<std::uint64_t>(params, 2);
  State& s = state();
  Location from = s.locate(src), to = s.locate(dst);
  // A kernel reaches a peer's memory only with peer access on (else: an illegal address on real
  // hardware; the engine never does that).
  auto& peers = s.contexts.at(static_cast<std::size_t>(device)).peers;
  bool peer_ok = (from.device < 0 || from.device == device || peers.count(from.device)) &&
                 (to.device < 0 || to.device == device || peers.count(to.device));
  CopyRoute r = route(from, to, peer_ok);
  timed_copy(stream, dst, src, bytes, r.link, r.peer && s.config.faults.corrupt_peer_copies,
             r.peer && s.config.faults.hang_peer_copies);
}

// stream_read(const uint4* src, u64 bytes, u64* sink): reads device memory at the device link's
// rate. The host touches one word per page only: the model, not this machine's memory, is timed.
void stream_read(void** params, Stream* stream) {
  auto* src = arg<const unsigned char*>(params, 0);
  auto bytes = arg<std::uint64_t>(params, 1);
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < bytes; i += 4096) sum += src[i];
  if (sum == 0x5a5a5a5a5a5a5a5aull) *arg<std::uint64_t*>(params, 2) = sum;  // as the kernel: never in practice
  advance_clock(stream, state().config.device.seconds_for(bytes));
}

void execute(Kernel k, void** params, Stream* on, int device) {
  switch (k) {
    case Kernel::hold: hold(params, on); break;
    case Kernel::copy: copy(params, on, device); break;
    case Kernel::fill_pattern:
      fill_pattern(arg<void*>(params, 0), arg<std::uint64_t>(params, 1), arg<std::uint64_t>(params, 2));
      note_memory_written();
      break;
    case Kernel::count_mismatches: {
      auto bad = count_pattern_mismatches(arg<const void*>(params, 0), arg<std::uint64_t>(params, 1),
                                          arg<std::uint64_t>(params, 2));
      __atomic_add_fetch(arg<unsigned long long*>(params, 3), bad, __ATOMIC_ACQ_REL);
      note_memory_written();
      break;
    }
    case Kernel::stream_read: stream_read(params, on); break;
    case Kernel::empty: advance_clock(on, state().config.kernel_us * 1e-6); break;
  }
}

}  // namespace

int run_kernel(Kernel k, void** params, Stream* stream, int device) {
  if (!stream) {
    execute(k, params, nullptr, device);
    return 0;
  }
  // Every parameter of these kernels is 8 bytes; the values are copied at launch, as the driver does.
  std::array<std::uint64_t, 4> values{};
  int count = parameter_count(k);
  for (int i = 0; i < count; ++i) std::memcpy(&values[static_cast<std::size_t>(i)], params[i], sizeof(std::uint64_t));
  stream->enqueue([values, k, device](Stream& on) mutable {
    void* copied[4];
    for (std::size_t i = 0; i < 4; ++i) copied[i] = &values[i];
    execute(k, copied, &on, device);
  });
  return 0;
}

}  // namespace interprobe::sim
