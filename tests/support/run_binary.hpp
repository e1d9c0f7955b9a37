#pragma once
// Runs the interprobe binary for CLI tests: arguments go straight to execv (never a shell),
// stdout and stderr are captured separately.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace interprobe::testing {

struct Process {
  int exit_code = -1;
  std::string out, err;
  bool timed_out = false;        // killed (with its process group) after RunLimits::time
  bool memory_exceeded = false;  // killed (with its process group) past RunLimits::rss_bytes
  double seconds = 0;            // wall time from start to exit (or kill)
};

// Limits for a run that may hang or run away. The child leads its own process group, so a
// kill also ends anything it started.
struct RunLimits {
  std::chrono::milliseconds time{0};  // 0: wait as long as it takes
  std::uint64_t rss_bytes = 0;        // 0: no limit; polled from /proc/<pid>/status
  // Runs in the parent after fork, before the child may exec; gets the child's pid (e.g. to
  // plant files whose names contain it).
  std::function<void(int pid)> before_exec;
};

// env entries "NAME=value" are added to the child's environment.
Process run_interprobe(const std::vector<std::string>& args, const std::vector<std::string>& env = {});
// The same for another executable (e.g. a copy of interprobe placed elsewhere).
Process run_binary(const std::string& binary, const std::vector<std::string>& args, const std::vector<std::string>& env = {});
Process run_interprobe(const std::vector<std::string>& args, const std::vector<std::string>& env,
                       const RunLimits& limits);
// Any program (argv[0] = `binary`), with the same capture and limits.
Process run_program(const std::string& binary, const std::vector<std::string>& args,
                    const std::vector<std::string>& env, const RunLimits& limits);

}  // namespace interprobe::testing
