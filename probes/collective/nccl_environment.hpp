#pragma once
// NCCL reads its environment ONCE per process: NCCL_P2P_DISABLE (cached in a static of
// graph/paths.cc), NCCL_SHM_DISABLE (an NCCL_PARAM, cached on first use), NCCL_DEBUG and
// NCCL_DEBUG_FILE (ncclDebugInit runs once). Re-initializing a communicator with another value
// silently keeps the first. So a variant is applied before the first NCCL init of a process;
// further variants run in child processes (probes/collective/child_process.hpp).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/collective.hpp"

namespace interprobe::collective {

using report::AllreduceVariant;

// The command line's spelling of a variant: default, p2p-off, shm-off (the report writes p2p_off).
const char* cli_name(AllreduceVariant variant);
// The variables a variant sets.
std::map<std::string, std::string> variant_environment(AllreduceVariant variant);
// "default,p2p-off" -> list, unique; InputError naming --variant for an unknown name.
std::vector<AllreduceVariant> parse_variant_list(const std::string& text);

// Sets variables for a scope and restores what was there before.
class ScopedEnvironment {
 public:
  explicit ScopedEnvironment(const std::map<std::string, std::string>& values);
  ~ScopedEnvironment();
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// NCCL_* variables of this process's environment, except the NCCL_DEBUG* ones interprobe sets.
std::map<std::string, std::string> nccl_environment_in_force();

// Points NCCL's debug log at a private temporary directory, once per process, before NCCL
// starts: NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS with INIT,ENV,TUNING, NCCL_DEBUG_FILE.
class NcclLogCapture {
 public:
  static NcclLogCapture& for_this_process();
  // Log text written since the previous call (all files: one per process, %h.%p).
  std::string read_new();
  const std::vector<std::string>& notes() const { return notes_; }
  bool active() const { return !dir_.empty(); }
  ~NcclLogCapture();

 private:
  NcclLogCapture();
  std::string dir_;
  std::map<std::string, std::size_t> offsets_;
  std::vector<std::string> notes_;
};

}  // namespace interprobe::collective
