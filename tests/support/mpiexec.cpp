#include "support/mpiexec.hpp"
#include "support/slurp.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace fs = std::filesystem;

namespace interprobe::testing {

namespace {

}  // namespace

// mpiexec ARGS..., stdout through a pipe, stderr into a file; killed after `limit_s`. OpenMPI
// refuses root without these variables and needs oversubscription on machines with one core;
// other MPIs ignore them.
Launch mpiexec(const std::string& launcher, const std::vector<std::string>& args, double limit_s,
               const std::vector<std::string>& extra_env) {
  std::vector<std::string> env;
  std::string asan_options = "ASAN_OPTIONS=detect_leaks=0";
  for (char** e = environ; *e; ++e) {
    std::string var(*e);
    if (var.rfind("ASAN_OPTIONS=", 0) == 0) asan_options = var + ":detect_leaks=0";
    // The width of the terminal ctest ran in is not the test's (as in run_binary.cpp).
    else if (var.rfind("COLUMNS=", 0) != 0) env.push_back(std::move(var));
  }
  // Under AddressSanitizer the ranks still catch memory errors, but not leaks: OpenMPI's
  // runtime keeps allocations of components it dlclose()s before exit, which LeakSanitizer can
  // neither attribute nor suppress. A build without ASan ignores the variable.
  env.push_back(asan_options);
  for (const char* v : {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_rmaps_base_oversubscribe=1"})
    env.emplace_back(v);
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<std::string> argv_strings = {launcher};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv, envp;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  char err_path[] = "/tmp/interprobe-mpi-err-XXXXXX";
  int err_fd = ::mkstemp(err_path);
  int pipe_fds[2];
  EXPECT_EQ(::pipe(pipe_fds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  Launch result;
  auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, launcher.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  ::close(err_fd);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    ADD_FAILURE() << "cannot start " << launcher;
    return result;
  }
  ::fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
  char buffer[65536];
  int status = 0;
  for (;;) {
    ssize_t n;
    while ((n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0) result.out.append(buffer, static_cast<std::size_t>(n));
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit_s) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ADD_FAILURE() << "mpiexec still running after " << limit_s << " s: a hang";
      break;
    }
    ::usleep(20000);
  }
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0) result.out.append(buffer, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.err = slurp(err_path);
  ::unlink(err_path);
  return result;
}

}  // namespace interprobe::testing
