#pragma once
// The workloads `run` ranks when the operator names none: a dense 70B-class model, a MoE and an
// MLA MoE from examples/models, compiled in (builtin_models.cmake).
#include <string>
#include <vector>

namespace interprobe::workload {

struct BuiltinModel {
  const char* name;    // "llama-3.1-70b"
  const char* origin;  // "examples/models/llama-3.1-70b.json"
  const char* config_json;
};

const std::vector<BuiltinModel>& builtin_models();

}  // namespace interprobe::workload
