#pragma once
// A whole file as a string (empty when it cannot be read): the tests' outputs and logs.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace interprobe::testing {

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace interprobe::testing
