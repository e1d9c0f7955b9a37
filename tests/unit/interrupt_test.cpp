// SIGINT and SIGTERM end the run (issue 11): the first one is a request the run honours at its
// next check; a run stuck where it never checks still ends with 130 after the grace period; a
// second signal ends the process at once.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/interrupt.hpp"

namespace {

using namespace std::chrono_literals;

// Forks a child that installs the handlers, then runs `body`; returns its wait status, or -1
// (after killing it) when it is still running after `limit`.
template <typename Body>
int run_child(Body body, std::chrono::milliseconds limit) {
  pid_t pid = ::fork();
  if (pid == 0) {
    interprobe::install_interrupt_handler();
    body();
    ::_exit(0);
  }
  auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(10ms);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

[[noreturn]] void spin_forever() {
  std::atomic<unsigned long> turns{0};
  while (true) turns.fetch_add(1, std::memory_order_relaxed);
}

TEST(Interrupt, SigtermIsARequestLikeSigint) {
  int status = run_child(
      [] {
        ::raise(SIGTERM);
        ::_exit(interprobe::interrupt_requested() ? 130 : 1);
      },
      5000ms);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 130);
}

TEST(Interrupt, AStuckRunStillEndsAfterTheGracePeriod) {
  int status = run_child(
      [] {
        interprobe::set_interrupt_grace_seconds(1);
        ::raise(SIGTERM);
        spin_forever();  // a library loop that never looks at the flag
      },
      5000ms);
  ASSERT_NE(status, -1) << "still running 5 s after SIGTERM";
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 130);
}

TEST(Interrupt, TheSecondSignalEndsAtOnce) {
  for (int second : {SIGINT, SIGTERM}) {
    auto started = std::chrono::steady_clock::now();
    int status = run_child(
        [second] {
          interprobe::set_interrupt_grace_seconds(0);
          ::raise(SIGTERM);
          ::raise(second);
          spin_forever();
        },
        5000ms);
    ASSERT_NE(status, -1) << "the second signal did not end it";
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status;
    EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
  }
}

}  // namespace
