#pragma once
// One progress line on stderr, redrawn in place; silent with --quiet or when stderr is no TTY.
#include <string>

namespace interprobe {

class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled) {}
  static Progress for_terminal(bool quiet);
  static Progress& disabled();
  bool enabled() const { return enabled_; }
  void update(const std::string& line);
  void clear();
  ~Progress();

 private:
  bool enabled_;
  bool shown_ = false;
};

}  // namespace interprobe
