#pragma once
// `interprobe snapshot`: runs the inventory probes with a recorder on the root, copies everything
// they read (plus the fixed detection set, CPUID, NVML state, two seconds of NVML telemetry and an hwloc export) into a private
// staging directory, redacts it, and publishes it as DIR or FILE.tar.gz. An interrupted or failed
// snapshot leaves nothing at the destination.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/cpuid.hpp"
#include "common/host_root.hpp"
#include "common/output_file.hpp"
#include "probes/runner/probe.hpp"
#include "probes/snapshot/capture.hpp"

namespace interprobe::snapshot {

inline constexpr double kSnapshotTelemetryS = 2;  // NVML counters recorded into /telemetry.json

struct SnapshotRequest {
  std::filesystem::path destination;  // a new or empty directory, or FILE.tar.gz
  bool redact = true;
  bool force = false;  // replace an existing archive file (never a directory)
  std::string tool_version;
  std::string created_at;  // ISO 8601, UTC
};

// Throws InputError naming -o when the destination cannot take a snapshot; checked before any work.
void check_snapshot_destination(const SnapshotRequest& request);

// Returns the manifest written into the snapshot. Throws InterruptedError on Ctrl-C (nothing published).
Manifest take_snapshot(HostRoot& root, const CpuidSource& cpuid,
                       const std::vector<std::unique_ptr<Probe>>& inventory_probes, const SnapshotRequest& request);

}  // namespace interprobe::snapshot
