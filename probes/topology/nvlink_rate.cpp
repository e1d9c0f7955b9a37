#include "probes/topology/nvlink_rate.hpp"

#include <array>
#include <string_view>

#include "common/text.hpp"

namespace interprobe {

namespace {

enum class Family { pascal, volta_to_hopper, blackwell, unknown };

// Marketing names cover parts whose compute capability a recording did not keep; the order
// matters only in that no entry is a prefix trap for another family.
Family family_from_name(const std::optional<std::string>& name) {
  if (!name) return Family::unknown;
  const std::string n = to_lower(*name);
  constexpr std::array<std::string_view, 4> kBlackwell = {"b100", "b200", "b300", "gb200"};
  constexpr std::array<std::string_view, 7> kHopper = {"h100", "h200", "h800", "h20", "gh100", "gh200", "hopper"};
  constexpr std::array<std::string_view, 6> kAmpereVolta = {"a100", "a800", "ga100", "v100", "gv100", "a30"};
  for (auto k : kBlackwell)
    if (n.find(k) != std::string::npos) return Family::blackwell;
  for (auto k : kHopper)
    if (n.find(k) != std::string::npos) return Family::volta_to_hopper;
  for (auto k : kAmpereVolta)
    if (n.find(k) != std::string::npos) return Family::volta_to_hopper;
  if (n.find("p100") != std::string::npos) return Family::pascal;
  return Family::unknown;
}

Family family_of(const std::optional<std::string>& compute_capability, const std::optional<std::string>& name) {
  if (auto major = compute_capability_major(compute_capability)) {
    if (*major == 6) return Family::pascal;
    if (*major >= 7 && *major <= 9) return Family::volta_to_hopper;
    if (*major >= 10) return Family::blackwell;
  }
  return family_from_name(name);
}

std::optional<double> rate_of(Family f) {
  switch (f) {
    case Family::pascal: return 20.0;
    case Family::volta_to_hopper: return 25.0;
    case Family::blackwell: return 50.0;
    case Family::unknown: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> compute_capability_major(const std::optional<std::string>& compute_capability) {
  if (!compute_capability) return std::nullopt;
  const std::string& s = *compute_capability;
  auto digits = [&](std::size_t from, std::size_t to) {
    if (to <= from || to - from > 2) return false;
    for (std::size_t i = from; i < to; ++i)
      if (s[i] < '0' || s[i] > '9') return false;
    return true;
  };
  auto dot = s.find('.');
  if (dot == std::string::npos || !digits(0, dot) || !digits(dot + 1, s.size())) return std::nullopt;
  return std::stoi(s.substr(0, dot));
}

std::optional<double> nvlink_gbps_per_link(std::optional<std::int64_t> nvml_version,
                                           const std::optional<std::string>& compute_capability,
                                           const std::optional<std::string>& name) {
  const Family family = family_of(compute_capability, name);
  if (nvml_version) {
    if (*nvml_version == 1) return 20.0;
    if (*nvml_version >= 2 && *nvml_version <= 6) return 25.0;
    // 7 is "5.0" on Blackwell and, reportedly, on Hopper too: only the architecture tells.
    if (*nvml_version == 7) return family == Family::unknown ? std::nullopt : rate_of(family);
  }
  return rate_of(family);
}

}  // namespace interprobe
