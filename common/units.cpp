#include "common/units.hpp"

#include <cctype>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/text.hpp"

namespace interprobe {

std::uint64_t parse_size_bytes(std::string_view text, std::string_view what) {
  std::string_view s = trim(text);
  auto bad = [&](std::string_view why) {
    return InputError(fmt::format("{}: '{}' {}; give a byte count with an optional K, M, G or T suffix "
                                  "(binary), e.g. 4, 64K, 1G",
                                  what, std::string(text), why));
  };
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits == 0) throw bad("is not a size");
  auto number = parse_int(s.substr(0, digits));
  if (!number) throw bad("is too large");
  std::string suffix = to_lower(s.substr(digits));
  if (!suffix.empty() && suffix.back() == 'b') suffix.pop_back();  // "KB", "KiB", "B"
  if (suffix.size() == 2 && suffix[1] == 'i') suffix.pop_back();
  unsigned shift = 0;
  if (suffix.empty()) shift = 0;
  else if (suffix == "k") shift = 10;
  else if (suffix == "m") shift = 20;
  else if (suffix == "g") shift = 30;
  else if (suffix == "t") shift = 40;
  else throw bad(fmt::format("has an unknown suffix '{}'", std::string(s.substr(digits))));
  auto value = static_cast<std::uint64_t>(*number);
  if (shift > 0 && value > (std::numeric_limits<std::uint64_t>::max() >> shift)) throw bad("is too large");
  return value << shift;
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  if (std::fabs(value - std::round(value)) < 1e-9) return fmt::format("{:.0f} {}", value, units[unit]);
  return fmt::format("{:.1f} {}", value, units[unit]);
}

std::string format_size_label(std::uint64_t bytes) {
  static const char* suffixes[] = {"", "K", "M", "G", "T"};
  int unit = 0;
  std::uint64_t v = bytes;
  while (unit < 4 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", v, suffixes[unit]);
}

std::string format_gbps(double gbps) {
  if (gbps >= 100) return fmt::format("{:.0f}", gbps);
  if (gbps >= 10) return fmt::format("{:.1f}", gbps);
  return fmt::format("{:.2f}", gbps);
}

std::string format_significant(double v) {
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  if (v >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

std::string format_us(double us) {
  if (us >= 1000) return fmt::format("{:.0f}", us);
  if (us >= 10) return fmt::format("{:.1f}", us);
  return fmt::format("{:.2f}", us);
}

std::optional<int> pcie_generation(double gts) {
  static constexpr double kFloorGts[] = {2.0, 4.5, 7.5, 15.5, 31.5, 63.5, 127.0};  // Gen1 .. Gen7
  std::optional<int> generation;
  for (int i = 0; i < 7; ++i)
    if (gts >= kFloorGts[i]) generation = i + 1;
  return generation;
}

}  // namespace interprobe
