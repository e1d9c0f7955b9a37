#pragma once
// Paths, sizes and strings shared by the hostile-tree builder and its plants (internal to
// tests/support/hostile_*.cpp).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace interprobe::testing::hostile {

namespace fs = std::filesystem;

inline const std::string kGpu = "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0";
inline const std::string kNode0 = "sys/devices/system/node/node0";
inline const std::string kCpu = "sys/devices/system/cpu";
inline const std::string kDmi = "sys/class/dmi/id";
inline constexpr unsigned long long kHugeBytes = 4ull << 30;
inline constexpr int kLexicalChain = 12;  // up12 is 12 levels above the root: "/" from any depth used here

// Terminal attacks: OSC title, BEL, C1 CSI as UTF-8 and as a raw byte (split literals: "\x9b31"
// would be one hex escape).
inline const std::string kEvilName = "Evil\x1b]0;pwned\x07VM\xc2\x9b" "31m\x9b" "32mX";

inline std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string ups(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += "../";
  return s;
}

inline std::string cpulist_of(std::size_t ranges) {
  std::string s;
  for (std::size_t i = 0; i < ranges; ++i) s += (i ? "," : "") + std::to_string(2 * i);
  return s + "\n";
}

}  // namespace interprobe::testing::hostile
