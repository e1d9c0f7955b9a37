#pragma once
// Checks shared by subcommand options. CLI11 converts "nan", "inf" and "1e999" into a double
// without complaint; no option of ours means any of them, and a NaN slips past every `x < 0`
// test afterwards. Every floating-point option carries `finite_number()`.
#include <cmath>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

namespace interprobe::cli {

inline CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        double value = std::strtod(text.c_str(), &end);
        if (end == text.c_str()) return {};  // no number at all: CLI11's own conversion says so
        if (!std::isfinite(value)) return "'" + text + "' is not a finite number; give e.g. 0.5 or 2";
        return {};
      },
      "", "finite");
}

}  // namespace interprobe::cli
