#include "probes/collective/nccl_log.hpp"

#include <regex>

#include "common/text.hpp"

namespace interprobe::collective {

namespace {

constexpr std::size_t kMaxWarnings = 8;

// "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read", "Channel 00 : 0[3000] -> 1[4000] via P2P/IPC",
// "Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/0", "... via SHM/direct/direct".
const std::regex& channel_line() {
  static const std::regex re(R"(NCCL INFO Channel \d+(?:/\d+)? : \d+\[[^\]]*\] -> \d+\[[^\]]*\] (?:\[(?:send|receive)\] )?via (\S+(?: pointer)?))");
  return re;
}

// "AllReduce: 4 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..0}" (NCCL 2.19+, TUNING).
const std::regex& tuning_line() {
  static const std::regex re(R"(NCCL INFO AllReduce: (\d+) Bytes -> Algo (\w+) proto (\w+))");
  return re;
}

const std::regex& version_line() {
  static const std::regex re(R"(NCCL INFO NCCL version (\S+))");
  return re;
}

}  // namespace

void parse_nccl_log(std::string_view text, NcclLogSummary& into) {
  for (const auto& raw : split(text, '\n')) {
    if (raw.size() > 4096) continue;  // not a line NCCL writes
    const std::string line(trim(raw));
    std::smatch m;
    if (line.find("NCCL WARN") != std::string::npos) {
      if (into.warnings.size() < kMaxWarnings) into.warnings.push_back(line.substr(line.find("NCCL WARN")));
    } else if (line.find(" via ") != std::string::npos && std::regex_search(line, m, channel_line())) {
      into.transports[m[1].str()] += 1;
    } else if (line.find("Bytes -> Algo") != std::string::npos && std::regex_search(line, m, tuning_line())) {
      auto bytes = parse_int(m[1].str());
      if (bytes) into.algorithms[{*bytes, m[2].str(), m[3].str()}] += 1;
    } else if (line.find("NCCL version") != std::string::npos && std::regex_search(line, m, version_line())) {
      into.version = m[1].str();
    }
  }
}

std::vector<report::CollectiveTransport> transports_of(const NcclLogSummary& log) {
  std::vector<report::CollectiveTransport> out;
  for (const auto& [name, connections] : log.transports) out.push_back({name, connections});
  return out;
}

std::vector<report::CollectiveAlgorithm> algorithms_of(const NcclLogSummary& log) {
  std::vector<report::CollectiveAlgorithm> out;
  for (const auto& [key, calls] : log.algorithms) out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), calls});
  return out;
}

}  // namespace interprobe::collective
