#include "probes/compute/gpu_datasheets.hpp"

#include <algorithm>
#include <iterator>
#include <vector>

#include <fmt/format.h>

namespace interprobe {

using report::ComputeDtype;

std::uint64_t pytorch_workspace_bytes(int cc_major, int cc_minor) {
  if (cc_major == 9 && cc_minor == 0) return 4096 * 1024 * 8;  // ":4096:8"
  return 4096 * 1024 * 2 + 16 * 1024 * 8;                      // ":4096:2:16:8"
}

std::pair<std::optional<double>, std::string> published_gpu_peak(const std::string& name, ComputeDtype dtype) {
  // A row matches a device name whose words (split at spaces and dashes) include the model as a
  // whole word and the variant word, or, for a row without a variant, none of the variant words:
  // "NVIDIA H200 NVL" is not the H200 SXM, "NVIDIA GH200 480GB" not an H200, an L40 not an L4.
  struct Row {
    const char* model;
    const char* variant;  // "" = the SXM / only form
    double bf16, fp8;     // dense TFLOP/s; f16 = bf16 on these parts; 0: no such tensor core
    const char* basis;
  };
  static const Row rows[] = {
      {"H100", "PCIe", 756.5, 1513, "NVIDIA H100 PCIe datasheet"},
      {"H100", "NVL", 835.5, 1670.5, "NVIDIA H100 NVL datasheet"},
      {"H100", "", 989.4, 1978.9, "NVIDIA H100 SXM5 datasheet"},
      {"H200", "NVL", 835.5, 1670.5, "NVIDIA H200 NVL datasheet (1,671 / 3,341 TFLOPS with sparsity, halved)"},
      {"H200", "", 989.4, 1978.9, "NVIDIA H200 SXM datasheet"},
      {"B200", "", 2250, 4500, "NVIDIA HGX B200 datasheet (per GPU)"},
      {"A100", "", 312, 0, "NVIDIA A100 datasheet"},
      {"A100", "PCIe", 312, 0, "NVIDIA A100 datasheet"},
      {"L40S", "", 362.05, 733, "NVIDIA L40S datasheet"},
      {"L40", "", 181.05, 362.05, "NVIDIA L40 datasheet"},
      {"L4", "", 121, 242.5, "NVIDIA L4 datasheet"},
  };
  static const char* const variants[] = {"PCIe", "NVL"};
  std::vector<std::string> words;
  for (std::size_t at = 0; at <= name.size();) {
    std::size_t end = name.find_first_of(" -", at);
    if (end == std::string::npos) end = name.size();
    if (end > at) words.push_back(name.substr(at, end - at));
    at = end + 1;
  }
  auto has = [&](const char* word) { return std::find(words.begin(), words.end(), word) != words.end(); };
  auto matches = [&](const Row& r) {
    if (!has(r.model)) return false;
    if (*r.variant) return has(r.variant);
    return std::none_of(std::begin(variants), std::end(variants), has);
  };
  if (dtype == ComputeDtype::f32) return {std::nullopt, "the cuda engine does not run f32"};
  for (const auto& r : rows) {
    if (!matches(r)) continue;
    double v = dtype == ComputeDtype::fp8_e4m3 ? r.fp8 : r.bf16;
    if (v <= 0) return {std::nullopt, fmt::format("{}: no {} tensor cores", r.basis, report::to_string(dtype))};
    return {v, fmt::format("{}, dense (without sparsity), boost clock", r.basis)};
  }
  return {std::nullopt, fmt::format("no published peak in interprobe's table for \"{}\"", name)};
}

}  // namespace interprobe
