// The evidence log every signal reader writes to, and the string hygiene for machine text.
#include "common/host_root.hpp"
#include "common/text.hpp"
#include "probes/virt/virt_signals.hpp"

namespace interprobe::virt {

void EvidenceLog::add(std::string source, std::string family, std::string value, std::string implies) {
  evidence_.push_back({std::move(source), std::move(family), std::move(value), std::move(implies)});
}

void EvidenceLog::warn(std::string source, std::string family, std::string value, std::string what) {
  add(std::move(source), std::move(family), std::move(value), "warning: " + what);
}

std::string sanitize(std::string_view raw, std::size_t max_chars) {
  return printable(raw, {.ascii_only = true, .max_chars = max_chars});
}

std::string describe_failure(int read_failure) {
  auto failure = static_cast<ReadFailure>(read_failure);
  if (failure == ReadFailure::permission_denied) return kNeedsRoot;
  if (failure == ReadFailure::missing) return "absent";
  return std::string("unreadable: ") + to_string(failure);
}

}  // namespace interprobe::virt
