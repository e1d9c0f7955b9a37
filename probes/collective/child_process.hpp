#pragma once
// Runs interprobe itself in a child process (no shell: argv straight to execve) with extra
// environment variables, collecting its stdout. Used to measure an NCCL variant in a fresh
// process, because NCCL reads its environment once per process.
#include <map>
#include <string>
#include <vector>

namespace interprobe::collective {

struct ChildResult {
  int exit_code = -1;     // the child's exit status; 128+N when signal N ended it
  bool timed_out = false; // killed after `timeout_s`
  std::string out;        // its stdout
  std::string error;      // why it could not be started
};

ChildResult run_child(const std::string& executable, const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& extra_environment, double timeout_s);

}  // namespace interprobe::collective
