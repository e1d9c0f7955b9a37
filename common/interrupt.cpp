#include "common/interrupt.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <csignal>

#include "common/errors.hpp"

namespace interprobe {

namespace {
std::atomic<bool> g_interrupted{false};
std::atomic<unsigned> g_grace_s{kInterruptGraceSeconds};

constexpr char kGiveUp[] = "\ninterprobe: interrupted, and the run did not stop within the grace period; exiting\n";

extern "C" void on_grace_expired(int) {
  // Async-signal-safe only: a probe stuck where it never checks the flag ends here.
  ssize_t ignored = ::write(STDERR_FILENO, kGiveUp, sizeof kGiveUp - 1);
  (void)ignored;
  ::_exit(130);
}

extern "C" void on_interrupt(int) {
  if (g_interrupted.exchange(true)) {
    // The second SIGINT or SIGTERM: end now, as killed by SIGINT (the shell sees 130).
    std::signal(SIGINT, SIG_DFL);
    sigset_t sigint;
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    ::sigprocmask(SIG_UNBLOCK, &sigint, nullptr);  // blocked while a SIGINT handler runs
    std::raise(SIGINT);
    ::_exit(130);  // SIGINT blocked or ignored by a library: still end
  }
  if (unsigned grace = g_grace_s.load(); grace > 0) ::alarm(grace);
}
}  // namespace

void install_interrupt_handler() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: blocking waits return EINTR and see the flag
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  struct sigaction grace {};
  grace.sa_handler = on_grace_expired;
  sigemptyset(&grace.sa_mask);
  sigaction(SIGALRM, &grace, nullptr);
  // A parent that blocked these (some supervisors and CI runners do; the mask survives exec)
  // would hold Ctrl-C, SIGTERM and the grace timer pending for ever: take them here, and one
  // that arrived before this point is delivered now.
  sigset_t ours;
  sigemptyset(&ours);
  for (int signal : {SIGINT, SIGTERM, SIGALRM}) sigaddset(&ours, signal);
  ::pthread_sigmask(SIG_UNBLOCK, &ours, nullptr);
}

void set_interrupt_grace_seconds(unsigned seconds) { g_grace_s.store(seconds); }

bool interrupt_requested() { return g_interrupted.load(std::memory_order_relaxed); }
void request_interrupt() { g_interrupted.store(true); }
void clear_interrupt() { g_interrupted.store(false); }

void throw_if_interrupted() {
  if (interrupt_requested()) throw InterruptedError();
}

}  // namespace interprobe
