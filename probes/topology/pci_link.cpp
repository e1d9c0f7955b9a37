#include "probes/topology/pci_link.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/text.hpp"

namespace interprobe {

namespace {

bool is_unknown_word(std::string_view s) { return starts_with_ci(s, "unknown"); }

}  // namespace

LinkAttribute<double> parse_link_speed_gts(std::string_view text) {
  LinkAttribute<double> out;
  std::string_view s = trim(text);
  if (is_unknown_word(s)) return out;
  auto words = split_whitespace(s);
  // "<number> GT/s" optionally followed by "PCIe" (newer kernels); nothing else is accepted.
  bool shape_ok = (words.size() == 2 || (words.size() == 3 && words[2] == "PCIe")) && words[1] == "GT/s";
  std::optional<double> gts = shape_ok ? parse_double(words[0]) : std::nullopt;
  if (!gts || !std::isfinite(*gts) || *gts <= 0 || *gts > 1024) {
    out.garbage = true;
    return out;
  }
  out.value = *gts;
  return out;
}

LinkAttribute<int> parse_link_width(std::string_view text) {
  LinkAttribute<int> out;
  auto width = parse_int(text);
  if (!width || *width < 0 || *width > 32) {
    out.garbage = true;
    return out;
  }
  if (*width > 0) out.value = static_cast<int>(*width);
  return out;
}

double link_encoding_efficiency(double gts) {
  if (gts <= 5.0 + 1e-9) return 8.0 / 10.0;
  if (gts <= 32.0 + 1e-9) return 128.0 / 130.0;
  return 242.0 / 256.0;
}

double link_gbps(double gts, std::int64_t width) { return gts * link_encoding_efficiency(gts) * width / 8.0; }

void complete_link(report::PciLink& link) {
  link.current_gbps.reset();
  link.max_gbps.reset();
  if (link.current_gts && link.current_lanes) link.current_gbps = link_gbps(*link.current_gts, *link.current_lanes);
  if (link.max_gts && link.max_lanes) link.max_gbps = link_gbps(*link.max_gts, *link.max_lanes);
  bool speed_known = link.current_gts && link.max_gts;
  bool width_known = link.current_lanes && link.max_lanes;
  bool slower = speed_known && *link.current_gts + 1e-9 < *link.max_gts;
  bool narrower = width_known && *link.current_lanes < *link.max_lanes;
  if (slower || narrower) link.downtrained = true;
  else if (speed_known && width_known) link.downtrained = false;
  else link.downtrained.reset();
}

}  // namespace interprobe
