#pragma once
// Starts an MPI launcher (mpiexec/mpirun) for CLI tests, with a time limit: stdout through a
// pipe, stderr into a file. OpenMPI refuses root without its two variables and needs
// oversubscription on machines with few cores; they are set here (other MPIs ignore them).
#include <string>
#include <vector>

namespace interprobe::testing {

// The launcher CMake found, where the target that includes this sets INTERPROBE_MPIEXEC (empty: none).
#ifdef INTERPROBE_MPIEXEC
inline const std::string kMpiexec = INTERPROBE_MPIEXEC;
#endif

struct Launch {
  int exit_code = -1;
  std::string out, err;
  double seconds = 0;
};

// launcher ARGS..., with this process's environment plus `env` ("NAME=value"); killed after
// `limit_s` (a gtest failure: a hang).
Launch mpiexec(const std::string& launcher, const std::vector<std::string>& args, double limit_s = 180,
               const std::vector<std::string>& env = {});

}  // namespace interprobe::testing
