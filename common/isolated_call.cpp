#include "common/isolated_call.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>

#include "common/interrupt.hpp"

namespace interprobe {

namespace {

// The parent's address space now (the CUDA driver alone can reserve tens of GB), so the
// child's cap is "this much more", whatever was mapped before.
std::optional<rlim_t> address_space_cap(std::uint64_t extra_bytes) {
  std::FILE* statm = std::fopen("/proc/self/statm", "re");
  if (!statm) return std::nullopt;
  unsigned long long pages = 0;
  int got = std::fscanf(statm, "%llu", &pages);
  std::fclose(statm);
  if (got != 1) return std::nullopt;
  return static_cast<rlim_t>(pages * static_cast<unsigned long long>(::sysconf(_SC_PAGESIZE)) + extra_bytes);
}

void write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent stopped listening: it decides without us
    done += static_cast<std::size_t>(n);
  }
}

[[noreturn]] void child_main(const std::function<std::string()>& work, int fd, std::optional<rlim_t> cap) {
  // A library's own messages about foreign input quote it raw (libxml2 prints the offending
  // line): they must not reach the terminal, so the child has no stdout or stderr.
  int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null_fd >= 0) {
    ::dup2(null_fd, STDOUT_FILENO);
    ::dup2(null_fd, STDERR_FILENO);
  }
  if (cap) {
    rlimit limit{*cap, *cap};
    ::setrlimit(RLIMIT_AS, &limit);
  }
  int code = 0;
  std::string answer;
  try {
    answer = work();
  } catch (const std::exception& e) {
    answer = e.what();
    code = 1;
  } catch (...) {
    answer = "unknown exception";
    code = 1;
  }
  write_all(fd, answer);
  ::_exit(code);  // no atexit handlers, no stdio flush of buffers copied from the parent
}

// Kills and reaps the child on every way out of the parent, an exception included.
class Child {
 public:
  explicit Child(pid_t pid) : pid_(pid) {}
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      wait();
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  void kill() { ::kill(pid_, SIGKILL); }
  int wait() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_;
};

struct Fd {
  int fd;
  ~Fd() { ::close(fd); }
};

}  // namespace

IsolatedResult run_isolated(const std::function<std::string()>& work, const IsolationLimits& limits) {
  IsolatedResult result;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.why = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  auto cap = address_space_cap(limits.max_extra_memory_bytes);
  std::fflush(nullptr);  // nothing buffered is written twice
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    child_main(work, fds[1], cap);
  }
  ::close(fds[1]);
  Fd reader{fds[0]};
  if (pid < 0) {
    result.why = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  Child child(pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limits.timeout_s);
  char buffer[65536];
  while (true) {
    throw_if_interrupted();  // the child is killed on the way out
    auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left_ms <= 0) {
      result.ended = IsolatedResult::Ended::timed_out;
      break;
    }
    pollfd p{reader.fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<long long>(left_ms, 200))) <= 0) continue;
    ssize_t n = ::read(reader.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child is done
    if (result.answer.size() + static_cast<std::size_t>(n) > limits.max_answer_bytes) {
      result.ended = IsolatedResult::Ended::too_large;
      break;
    }
    result.answer.append(buffer, static_cast<std::size_t>(n));
  }
  if (result.ended != IsolatedResult::Ended::not_started) {
    child.kill();
    child.wait();
    result.answer.clear();
    return result;
  }
  int status = child.wait();
  if (WIFSIGNALED(status)) {
    result.ended = IsolatedResult::Ended::crashed;
    result.signal = WTERMSIG(status);
    result.answer.clear();
  } else {
    result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.ended = result.exit_status == 0 ? IsolatedResult::Ended::answered : IsolatedResult::Ended::failed;
  }
  return result;
}

}  // namespace interprobe
