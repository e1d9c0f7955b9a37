#include "support/run_binary.hpp"
#include "support/slurp.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace interprobe::testing {

namespace {
std::uint64_t rss_bytes_of(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
  return 0;
}

void kill_group(pid_t pid) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
}

// Waits for `pid`, killing its process group when a limit is passed. The group is killed
// before the leader is reaped: until then its pid (the group id) cannot be reused by anyone.
int wait_limited(pid_t pid, const RunLimits& limits, Process& p) {
  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  int status = 0;
  bool limited = limits.time.count() > 0 || limits.rss_bytes > 0;
  if (!limited) {
    ::waitpid(pid, &status, 0);
  } else {
    for (;;) {
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) break;
      if (limits.time.count() > 0 && clock::now() - start > limits.time) p.timed_out = true;
      else if (limits.rss_bytes > 0 && rss_bytes_of(pid) > limits.rss_bytes) p.memory_exceeded = true;
      if (p.timed_out || p.memory_exceeded) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    kill_group(pid);  // on a limit, and whatever a finished run started and left behind
    ::waitpid(pid, &status, 0);
  }
  p.seconds = std::chrono::duration<double>(clock::now() - start).count();
  return status;
}
}  // namespace

Process run_program(const std::string& binary, const std::vector<std::string>& args,
                    const std::vector<std::string>& env, const RunLimits& limits) {
  char out_path[] = "/tmp/interprobe-test-out-XXXXXX";
  char err_path[] = "/tmp/interprobe-test-err-XXXXXX";
  int out_fd = ::mkstemp(out_path);
  int err_fd = ::mkstemp(err_path);
  bool limited = limits.time.count() > 0 || limits.rss_bytes > 0;
  int go[2] = {-1, -1};  // the child execs once the parent closes the write end
  if (limits.before_exec && ::pipe(go) != 0) go[0] = go[1] = -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    if (limited) ::setpgid(0, 0);
    if (go[0] >= 0) {
      ::close(go[1]);
      char c;
      while (::read(go[0], &c, 1) < 0) {
      }
      ::close(go[0]);
    }
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    // The width of the terminal ctest ran in is not the test's: a test that is about width sets
    // COLUMNS itself (in env), so every test passes at any COLUMNS.
    ::unsetenv("COLUMNS");
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv;
    std::string program = binary;
    argv.push_back(program.data());
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    std::_Exit(127);
  }
  if (limited) ::setpgid(pid, pid);  // also here: no race with a kill before the child ran
  if (go[0] >= 0) {
    ::close(go[0]);
    try {
      limits.before_exec(pid);
    } catch (...) {
      kill_group(pid);
      ::waitpid(pid, nullptr, 0);
      ::close(go[1]);
      ::close(out_fd);
      ::close(err_fd);
      ::unlink(out_path);
      ::unlink(err_path);
      throw;
    }
    ::close(go[1]);
  }
  Process p;
  int status = wait_limited(pid, limits, p);
  ::close(out_fd);
  ::close(err_fd);
  p.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  p.out = slurp(out_path);
  p.err = slurp(err_path);
  ::unlink(out_path);
  ::unlink(err_path);
  return p;
}

Process run_interprobe(const std::vector<std::string>& args, const std::vector<std::string>& env,
                       const RunLimits& limits) {
  return run_program(INTERPROBE_BINARY, args, env, limits);
}

Process run_interprobe(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  return run_program(INTERPROBE_BINARY, args, env, RunLimits{});
}

Process run_binary(const std::string& binary, const std::vector<std::string>& args, const std::vector<std::string>& env) {
  return run_program(binary, args, env, RunLimits{});
}

}  // namespace interprobe::testing
