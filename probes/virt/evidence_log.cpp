// The evidence log every signal reader writes to, and the string hygiene for machine text.
#include <fmt/format.h>

#include "probes/common/host_root.hpp"
#include "probes/virt/virt_signals.hpp"

namespace interprobe::virt {

void EvidenceLog::add(std::string source, std::string family, std::string value, std::string implies) {
  evidence_.push_back({std::move(source), std::move(family), std::move(value), std::move(implies)});
}

void EvidenceLog::warn(std::string source, std::string family, std::string value, std::string what) {
  add(std::move(source), std::move(family), std::move(value), "warning: " + what);
}

std::string sanitize(std::string_view raw, std::size_t max_chars) {
  std::string out;
  std::size_t shown = 0;
  for (unsigned char c : raw) {
    if (shown >= max_chars) {
      out += "...";
      break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
    ++shown;
  }
  return out;
}

std::string describe_failure(int read_failure) {
  auto failure = static_cast<ReadFailure>(read_failure);
  if (failure == ReadFailure::permission_denied) return kNeedsRoot;
  if (failure == ReadFailure::missing) return "absent";
  return std::string("unreadable: ") + to_string(failure);
}

}  // namespace interprobe::virt
