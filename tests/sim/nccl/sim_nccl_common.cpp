#include "sim_nccl_common.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

namespace sim_nccl {

const Settings& settings() {
  static const Settings s = [] {
    Settings out;
    const char* file = std::getenv("INTERPROBE_SIM_CONFIG");
    if (!file) return out;
    std::ifstream in(file);
    auto j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.contains("nccl")) return out;
    const auto& n = j["nccl"];
    out.version = n.value("version", out.version);
    out.cuda_major = n.value("cuda_major", out.cuda_major);
    out.bus_gbps = n.value("bus_gbps", out.bus_gbps);
    out.latency_us = n.value("latency_us", out.latency_us);
    out.hang = n.value("hang", false);
    out.transport = n.value("transport", out.transport);
    out.peer_timeout_s = n.value("peer_timeout_s", out.peer_timeout_s);
    return out;
  }();
  return s;
}

std::string transport() {
  const char* off = std::getenv("NCCL_P2P_DISABLE");
  return off && std::strcmp(off, "1") == 0 ? "SHM/direct/direct" : settings().transport;
}

double ring_seconds(double bytes, int ranks) {
  return settings().latency_us * 1e-6 + 2.0 * (ranks - 1) / ranks * bytes / (settings().bus_gbps * 1e9);
}

namespace {

std::string expand(std::string pattern) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  for (std::size_t at; (at = pattern.find("%h")) != std::string::npos;) pattern.replace(at, 2, host);
  for (std::size_t at; (at = pattern.find("%p")) != std::string::npos;) pattern.replace(at, 2, std::to_string(getpid()));
  return pattern;
}

// NCCL's log settings as real NCCL holds them: read from the environment at the first line and
// kept until ncclResetDebugInit; the file is opened (truncated) once per reading.
struct DebugSettings {
  bool read = false;
  bool info = false;
  bool init = true, tuning = false;  // subsystems; NCCL's default mask is INIT,BOOTSTRAP,ENV
  std::string file;                  // empty: stdout
  bool opened = false;
};
std::mutex debug_m;
DebugSettings debug;

void read_debug_settings() {
  const char* level = std::getenv("NCCL_DEBUG");
  debug = DebugSettings{};
  debug.read = true;
  debug.info = level && (std::strcmp(level, "INFO") == 0 || std::strcmp(level, "TRACE") == 0);
  if (const char* subsys = std::getenv("NCCL_DEBUG_SUBSYS")) {
    std::string s = subsys;
    bool all = s.find("ALL") != std::string::npos;
    debug.init = all || s.find("INIT") != std::string::npos;
    debug.tuning = all || s.find("TUNING") != std::string::npos;
  }
  const char* file = std::getenv("NCCL_DEBUG_FILE");
  if (file && *file) debug.file = expand(file);
}

// Half <-> float by table and bits: _Float16 conversions are library calls on x86 without
// F16C (tens of ns each), which made half all-reduces far slower than the model they time; and
// clang before 15 has no _Float16 on x86 at all. Every half is exact as a float.
float from_half(std::uint16_t h) {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (std::uint32_t i = 0; i < 65536; ++i) {
      const std::uint32_t exponent = (i >> 10) & 0x1f, mantissa = i & 0x3ff;
      float magnitude;
      if (exponent == 0) magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero, subnormal
      else if (exponent == 31) magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : INFINITY;
      else magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), static_cast<int>(exponent) - 25);
      t[i] = (i & 0x8000) ? -magnitude : magnitude;
    }
    return t;
  }();
  return table[h];
}
// Round to nearest even (F. Giesen's float_to_half_fast3_rtne), as the hardware's conversion rounds.
std::uint16_t to_half(float v) {
  constexpr std::uint32_t f32_infinity = 255u << 23, f16_max = (127u + 16) << 23;
  constexpr std::uint32_t denormal_magic = ((127u - 15) + (23 - 10) + 1) << 23;
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  const std::uint32_t sign = u & 0x80000000u;
  u ^= sign;
  std::uint32_t out;
  if (u >= f16_max) {
    out = u > f32_infinity ? 0x7e00 : 0x7c00;  // NaN stays NaN, too large becomes infinity
  } else if (u < (113u << 23)) {                // a half subnormal: let the FPU round
    float f, magic;
    std::memcpy(&f, &u, 4);
    std::memcpy(&magic, &denormal_magic, 4);
    f += magic;
    std::memcpy(&out, &f, 4);
    out -= denormal_magic;
  } else {
    const std::uint32_t odd = (u >> 13) & 1;
    u += (static_cast<std::uint32_t>(15 - 127) << 23) + 0xfff + odd;
    out = u >> 13;
  }
  return static_cast<std::uint16_t>(out | (sign >> 16));
}
float from_bf16(std::uint16_t b) {
  std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
std::uint16_t to_bf16(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest even
  return static_cast<std::uint16_t>(u >> 16);
}

}  // namespace

void log_info(Subsys subsys, const std::string& text) {
  std::lock_guard lock(debug_m);
  if (!debug.read) read_debug_settings();
  if (!debug.info || (subsys == Subsys::init && !debug.init) || (subsys == Subsys::tuning && !debug.tuning)) return;
  FILE* out = debug.file.empty() ? stdout : std::fopen(debug.file.c_str(), debug.opened ? "a" : "w");
  if (!out) return;
  debug.opened = true;
  std::fprintf(out, "simhost:%d:%d [0] NCCL INFO %s\n", getpid(), getpid(), text.c_str());
  if (out != stdout) std::fclose(out);
}

void log_warn(const std::string& text) { std::fprintf(stderr, "simhost:%d:%d [0] NCCL WARN %s\n", getpid(), getpid(), text.c_str()); }

void reset_debug() {
  std::lock_guard lock(debug_m);
  debug = DebugSettings{};
}

std::string version_line() {
  int v = settings().version;
  return "NCCL version " + std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) + "." + std::to_string(v % 100) + "+cuda" +
         std::to_string(settings().cuda_major) + ".0 (simulated)";
}

std::size_t element_bytes(int type) { return type == kFloat32 ? 4 : 2; }
bool supported_type(int type) { return type == kFloat32 || type == kFloat16 || type == kBfloat16; }

void accumulate(float* sum, const void* src, int type, std::size_t count) {
  if (type == kFloat32) {
    const auto* f = static_cast<const float*>(src);
    for (std::size_t i = 0; i < count; ++i) sum[i] += f[i];
    return;
  }
  const auto* h = static_cast<const std::uint16_t*>(src);
  if (type == kFloat16)
    for (std::size_t i = 0; i < count; ++i) sum[i] += from_half(h[i]);
  else
    for (std::size_t i = 0; i < count; ++i) sum[i] += from_bf16(h[i]);
}

void store_all(void* dst, int type, const float* sum, std::size_t count) {
  if (type == kFloat32) {
    std::memcpy(dst, sum, count * sizeof(float));
    return;
  }
  auto* h = static_cast<std::uint16_t*>(dst);
  if (type == kFloat16)
    for (std::size_t i = 0; i < count; ++i) h[i] = to_half(sum[i]);
  else
    for (std::size_t i = 0; i < count; ++i) h[i] = to_bf16(sum[i]);
}

}  // namespace sim_nccl
