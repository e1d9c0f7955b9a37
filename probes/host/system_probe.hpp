#pragma once
// The `system` section: OS, kernel, CPU model and memory, read through the host root.
#include <memory>

#include "probes/runner/probe.hpp"

namespace interprobe {

class HostRoot;

report::SystemSection read_system(const HostRoot& root);
// Host identity for the report header (hostname and kernel as the root shows them).
report::HostInfo read_host_identity(const HostRoot& root);

std::unique_ptr<Probe> make_system_probe();

}  // namespace interprobe
