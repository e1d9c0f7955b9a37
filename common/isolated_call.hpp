#pragma once
// Runs a piece of work in a forked child process, so that a crash, hang or runaway allocation
// inside a library it calls on foreign input (hwloc parsing a user's XML) ends the child, not
// interprobe. The work's answer comes back as bytes through a pipe. The child is a fork, not an
// exec: call it before starting threads of our own (glibc keeps malloc usable after fork, but
// a lock another thread held at the fork would stay held in the child).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace interprobe {

struct IsolationLimits {
  double timeout_s = 10;                                          // then the child is killed
  std::size_t max_answer_bytes = std::size_t{256} << 20;           // a longer answer kills the child
  std::uint64_t max_extra_memory_bytes = std::uint64_t{1} << 30;  // address space beyond the parent's
};

struct IsolatedResult {
  enum class Ended { answered, failed, crashed, timed_out, too_large, not_started };
  Ended ended = Ended::not_started;
  std::string answer;  // answered: what the work returned; failed: its exception's message
  int signal = 0;      // crashed: the signal that ended the child
  int exit_status = 0; // failed: the child's exit status (a sanitizer's report ends it with 1)
  std::string why;     // not_started: what failed (fork, pipe)
};

// `work` runs in the child; its return value is the answer, an exception it throws is
// `failed` with the message. Interrupted (SIGINT/SIGTERM) while waiting: the child is killed
// and InterruptedError thrown.
IsolatedResult run_isolated(const std::function<std::string()>& work, const IsolationLimits& limits = {});

}  // namespace interprobe
