#pragma once
// Runs the interprobe binary for CLI tests: arguments go straight to execv (never a shell),
// stdout and stderr are captured separately.
#include <string>
#include <vector>

namespace interprobe::testing {

struct Process {
  int exit_code = -1;
  std::string out, err;
};

// env entries "NAME=value" are added to the child's environment.
Process run_interprobe(const std::vector<std::string>& args, const std::vector<std::string>& env = {});
// The same for another executable (e.g. a copy of interprobe placed elsewhere).
Process run_binary(const std::string& binary, const std::vector<std::string>& args, const std::vector<std::string>& env = {});

}  // namespace interprobe::testing
