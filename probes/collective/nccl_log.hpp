#pragma once
// What NCCL chose, read from its own debug log (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS with INIT
// and TUNING, NCCL_DEBUG_FILE): the transport of every channel connection and the algorithm
// and protocol of every collective. The log is untrusted text: unknown lines are skipped.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "model/collective.hpp"

namespace interprobe::collective {

struct NcclLogSummary {
  std::optional<std::string> version;  // "2.28.9+cuda13.0" from "NCCL version ..."
  std::map<std::string, std::int64_t> transports;  // "P2P/CUMEM" -> connections
  std::map<std::tuple<std::int64_t, std::string, std::string>, std::int64_t> algorithms;  // (bytes, algo, proto) -> calls
  std::vector<std::string> warnings;  // "NCCL WARN" lines, first few
};

// Adds what `text` (one or more log lines) says to `into`.
void parse_nccl_log(std::string_view text, NcclLogSummary& into);

// In report form, sorted: transports by name, algorithms by size.
std::vector<report::CollectiveTransport> transports_of(const NcclLogSummary& log);
std::vector<report::CollectiveAlgorithm> algorithms_of(const NcclLogSummary& log);

}  // namespace interprobe::collective
