#include "probes/common/interrupt.hpp"

#include <atomic>
#include <csignal>

#include "probes/common/errors.hpp"

namespace interprobe {

namespace {
std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
  if (g_interrupted.exchange(true)) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
}
}  // namespace

void install_interrupt_handler() {
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: blocking waits return EINTR and see the flag
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool interrupt_requested() { return g_interrupted.load(std::memory_order_relaxed); }
void request_interrupt() { g_interrupted.store(true); }
void clear_interrupt() { g_interrupted.store(false); }

void throw_if_interrupted() {
  if (interrupt_requested()) throw InterruptedError();
}

}  // namespace interprobe
