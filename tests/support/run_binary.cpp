#include "support/run_binary.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace interprobe::testing {

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

Process run_interprobe(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  return run_binary(INTERPROBE_BINARY, args, env);
}

Process run_binary(const std::string& binary, const std::vector<std::string>& args, const std::vector<std::string>& env) {
  char out_path[] = "/tmp/interprobe-test-out-XXXXXX";
  char err_path[] = "/tmp/interprobe-test-err-XXXXXX";
  int out_fd = ::mkstemp(out_path);
  int err_fd = ::mkstemp(err_path);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    std::_Exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(out_fd);
  ::close(err_fd);
  Process p;
  p.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  p.out = slurp(out_path);
  p.err = slurp(err_path);
  ::unlink(out_path);
  ::unlink(err_path);
  return p;
}

}  // namespace interprobe::testing
