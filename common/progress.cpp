#include "common/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include "common/text.hpp"

namespace interprobe {

Progress Progress::for_terminal(bool quiet) { return Progress(!quiet && ::isatty(STDERR_FILENO) == 1); }

Progress& Progress::disabled() {
  static Progress none(false);
  return none;
}

void Progress::update(const std::string& line) {
  if (!enabled_) return;
  // Probes put device names in it: no control sequence of theirs reaches the terminal.
  std::string clipped = printable(line, {.max_chars = 100});
  std::fprintf(stderr, "\r\x1b[K%s", clipped.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void Progress::clear() {
  if (!enabled_ || !shown_) return;
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
  shown_ = false;
}

Progress::~Progress() { clear(); }

}  // namespace interprobe
