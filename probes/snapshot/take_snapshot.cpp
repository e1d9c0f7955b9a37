#include "probes/snapshot/take_snapshot.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/interrupt.hpp"
#include "common/progress.hpp"
#include "probes/runner/probe_runner.hpp"
#include "probes/snapshot/archive.hpp"
#include "probes/telemetry/telemetry_probe.hpp"
#include "probes/topology/nvml_topology.hpp"

namespace interprobe::snapshot {

namespace fs = std::filesystem;

namespace {

// On a live machine the NVML state the topology and virtualization probes use is recorded as
// /nvml.json, the file they read when replaying. A replayed tree's own nvml.json was already
// copied with everything else the probes read.
void record_nvml(const HostRoot& root, const report::Report& inventory, bool redact, Capture& capture) {
  if (!root.is_live()) return;
  // The topology probe has just asked NVML (or said why it did not); that answer is cached.
  std::string why = "the topology probe did not run";
  std::vector<std::string> warnings;  // only a replayed recording can be malformed
  std::optional<NvmlTopology> nvml;
  if (inventory.topology && inventory.topology->nvml_source) nvml = load_nvml_topology(root, &why, warnings);
  else if (inventory.topology) why = inventory.topology->nvml_reason.value_or("NVML not queried");
  if (!nvml) {
    capture.manifest().unreadable.push_back({kNvmlRecordingPath, "NVML state not recorded: " + why, std::nullopt});
    return;
  }
  if (redact) {
    for (auto& gpu : nvml->gpus)
      if (gpu.uuid) gpu.uuid = stable_hash(*gpu.uuid);
    capture.manifest().redacted_paths.push_back(std::string(kNvmlRecordingPath) + " (GPU UUIDs)");
  }
  capture.write_file(kNvmlRecordingPath, encode_nvml_recording(*nvml));
}

// Two seconds of NVML counters as /telemetry.json, the trace `observe --root`/`run --root` classify
// (the same baseline `run` takes). Replaying a tree: its own trace is copied when it has one.
void record_telemetry(const HostRoot& root, Capture& capture) {
  if (!root.is_live()) {
    if (root.exists(kTelemetryTracePath)) capture.path(kTelemetryTracePath, false);
    return;
  }
  try {
    capture.write_file(kTelemetryTracePath, record_live_trace_json(kSnapshotTelemetryS, 0.1));
  } catch (const UnsupportedError& e) {
    capture.manifest().unreadable.push_back({kTelemetryTracePath, std::string("telemetry not recorded: ") + e.what(), std::nullopt});
  }
}

// `snapshot -o DIR`: DIR must be new or an empty directory (not a link): a second snapshot into
// it would mix two machines.
void check_directory_target(const fs::path& dest) {
  if (dest.empty()) throw InputError("-o '': empty path; give a new directory or FILE.tar.gz");
  struct stat st {};
  if (::lstat(dest.c_str(), &st) != 0) {
    if (errno != ENOENT) throw InputError(fmt::format("-o {}: cannot check the path ({})", dest.string(), std::strerror(errno)));
    // The parent gets the staging directory: the same checks as for a file there.
    check_output_target(dest, "-o", ExistingOutput::refuse);
    return;
  }
  std::error_code ec;
  if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode) || !fs::is_empty(dest, ec))
    throw InputError(fmt::format("snapshot -o {}: exists and is not an empty directory; choose a new path "
                                 "(or FILE.tar.gz; --force replaces only an archive file)",
                                 dest.string()));
  fs::path parent = dest.has_parent_path() ? dest.parent_path() : fs::path(".");
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    throw InputError(fmt::format("-o {}: directory {} is not writable (the snapshot is staged beside {}); choose "
                                 "another path",
                                 dest.string(), parent.string(), dest.filename().string()));
}

fs::path parent_of(const fs::path& p) { return p.has_parent_path() ? p.parent_path() : fs::path("."); }

// hwloc writes its export itself (following links); it writes into a private directory and the
// capture copies the result in like any other file.
void capture_hwloc_xml(const HostRoot& root, Capture& capture) {
  TempDir scratch;
  std::string why;
  fs::path file = scratch.path() / "hwloc.xml";
  if (!export_hwloc_xml(root, file, &why)) {
    capture.manifest().unreadable.push_back({"/hwloc.xml", why, std::nullopt});
    return;
  }
  std::ifstream in(file, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  capture.write_file("/hwloc.xml", content.str());
}

// Moves the finished staging directory to DIR (rename(2) replaces DIR only while it is empty).
void publish_directory(const fs::path& staged, const fs::path& dest) {
  mode_t mask = ::umask(022);
  ::umask(mask);
  ::chmod(staged.c_str(), 0755 & ~mask);
  if (::rename(staged.c_str(), dest.c_str()) != 0)
    throw InputError(fmt::format("-o {}: cannot move the snapshot into place ({}); it must be new or an empty directory",
                                 dest.string(), std::strerror(errno)));
}

}  // namespace

void check_snapshot_destination(const SnapshotRequest& request) {
  auto existing = request.force ? ExistingOutput::replace_regular : ExistingOutput::refuse;
  if (looks_like_archive(request.destination)) check_output_target(request.destination, "-o", existing);
  else check_directory_target(request.destination);
}

Manifest take_snapshot(HostRoot& root, const CpuidSource& cpuid, const std::vector<std::unique_ptr<Probe>>& inventory_probes,
                       const SnapshotRequest& request) {
  const fs::path& dest = request.destination;
  bool archive = looks_like_archive(dest);
  check_snapshot_destination(request);
  // Everything is staged in a private directory and published at the end: an interrupted or
  // failed snapshot leaves nothing at -o.
  std::optional<TempDir> staging;
  fs::path out_dir;
  if (archive) {
    staging.emplace();
    out_dir = staging->path() / "snapshot";
  } else {
    staging.emplace(parent_of(dest));
    out_dir = staging->path();
  }

  // Run the inventory probes with a recorder attached: the snapshot holds what they read.
  AccessLog log;
  root.set_access_log(&log);
  report::Report scratch;
  ProbeContext ctx{root, cpuid, Progress::disabled()};
  RunOutcome outcome = run_probes(inventory_probes, ctx, scratch);
  root.set_access_log(nullptr);
  if (outcome.interrupted) throw InterruptedError();

  Capture capture(root, out_dir);
  capture.everything_in(log);
  capture.fixed_detection_set();
  capture.cpuid(cpuid);
  record_nvml(root, scratch, request.redact, capture);
  record_telemetry(root, capture);
  capture_hwloc_xml(root, capture);
  throw_if_interrupted();
  auto& manifest = capture.manifest();
  manifest.tool_version = request.tool_version;
  manifest.created_at = request.created_at;
  manifest.redacted = request.redact;
  if (manifest.redacted) redact_tree(out_dir, manifest);
  capture.finish();
  throw_if_interrupted();
  if (archive) write_archive(out_dir, dest, request.force ? ExistingOutput::replace_regular : ExistingOutput::refuse);
  else publish_directory(out_dir, dest);
  return manifest;
}

}  // namespace interprobe::snapshot
