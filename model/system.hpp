#pragma once
// The `system` section: what the host is, as far as the operator cares for a GPU run.
#include <cstdint>
#include <optional>
#include <string>

#include "model/json_declare.hpp"

namespace interprobe::report {

struct SystemSection {
  std::optional<std::string> os_name;     // PRETTY_NAME of os-release
  std::optional<std::string> kernel;      // osrelease
  std::optional<std::string> architecture;
  std::optional<std::string> cpu_vendor;  // vendor_id of /proc/cpuinfo
  std::optional<std::string> cpu_model;   // model name of /proc/cpuinfo
  std::optional<std::int64_t> logical_cpus;
  std::optional<std::int64_t> memory_bytes;
  std::optional<std::string> kernel_cmdline;
};
INTERPROBE_JSON_DECLARE(SystemSection)  // system_json.cpp

}  // namespace interprobe::report
