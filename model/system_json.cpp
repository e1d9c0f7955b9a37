// The system section's JSON, defined beside the section rather than in json_codecs.cpp: the way a
// new section adds its structs without editing a shared file (docs/architecture.md).
#include "model/json_fields.hpp"
#include "model/system.hpp"

namespace interprobe::report {

INTERPROBE_JSON_DEFINE(SystemSection, os_name, kernel, architecture, cpu_vendor, cpu_model, logical_cpus, memory_bytes,
                       kernel_cmdline)

}  // namespace interprobe::report
