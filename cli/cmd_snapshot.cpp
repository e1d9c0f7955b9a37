#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/features.hpp"
#include "cli/session.hpp"
#include "probes/common/cpuid.hpp"
#include "probes/common/errors.hpp"
#include "probes/common/progress.hpp"
#include "probes/common/stopwatch.hpp"
#include "probes/runner/probe_runner.hpp"
#include "probes/snapshot/archive.hpp"
#include "probes/snapshot/capture.hpp"
#include "probes/topology/nvml_topology.hpp"

namespace interprobe::cli {

namespace fs = std::filesystem;

namespace {

struct SnapshotOptions {
  std::string destination;
  bool no_redact = false;
};

// On a live machine the NVML state the topology and virtualization probes use is recorded as
// /nvml.json, the file they read when replaying. A replayed tree's own nvml.json was already
// copied with everything else the probes read.
void record_nvml(const HostRoot& root, const report::Report& inventory, bool redact, snapshot::Capture& capture) {
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
      if (gpu.uuid) gpu.uuid = snapshot::stable_hash(*gpu.uuid);
    capture.manifest().redacted_paths.push_back(std::string(kNvmlRecordingPath) + " (GPU UUIDs)");
  }
  capture.write_file(kNvmlRecordingPath, encode_nvml_recording(*nvml));
}

int take_snapshot(const GlobalOptions& options, const SnapshotOptions& s) {
  Stopwatch clock;
  fs::path dest(s.destination);
  bool archive = snapshot::looks_like_archive(dest);
  std::error_code ec;
  if (archive) {
    auto dir = dest.has_parent_path() ? dest.parent_path() : fs::path(".");
    if (!fs::is_directory(dir, ec))
      throw InputError(fmt::format("snapshot -o {}: directory {} does not exist", dest.string(), dir.string()));
  } else if (fs::exists(dest, ec) && (!fs::is_directory(dest, ec) || !fs::is_empty(dest, ec))) {
    throw InputError(fmt::format("snapshot -o {}: exists and is not an empty directory; choose a new path "
                                 "(or FILE.tar.gz)",
                                 dest.string()));
  }

  OpenedRoot opened = open_root(options);
  auto cpuid = make_cpuid_source(opened.root);
  std::optional<snapshot::TempDir> staging;
  fs::path out_dir = dest;
  if (archive) {
    staging.emplace();
    out_dir = staging->path() / "snapshot";
  }

  // Run the inventory probes with a recorder attached: the snapshot holds what they read.
  AccessLog log;
  opened.root.set_access_log(&log);
  report::Report scratch;
  ProbeContext ctx{opened.root, *cpuid, Progress::disabled()};
  run_probes(inventory_probes(), ctx, scratch);
  opened.root.set_access_log(nullptr);

  snapshot::Capture capture(opened.root, out_dir);
  capture.everything_in(log);
  capture.fixed_detection_set();
  capture.cpuid(*cpuid);
  record_nvml(opened.root, scratch, !s.no_redact, capture);
  std::string hwloc_why;
  if (!snapshot::export_hwloc_xml(opened.root, out_dir / "hwloc.xml", &hwloc_why))
    capture.manifest().unreadable.push_back({"/hwloc.xml", hwloc_why, std::nullopt});
  auto& manifest = capture.manifest();
  manifest.tool_version = interprobe_version();
  manifest.created_at = utc_now_iso8601();
  manifest.redacted = !s.no_redact;
  if (manifest.redacted) snapshot::redact_tree(out_dir, manifest);
  capture.finish();
  if (archive) snapshot::write_archive(out_dir, dest);

  if (!options.quiet) {
    std::cerr << fmt::format("snapshot: {} files, {} links, {} bytes -> {} in {:.2f} s; {} unreadable (see "
                             "manifest.json){}\n",
                             manifest.files, manifest.links, manifest.bytes, dest.string(), clock.elapsed_s(),
                             manifest.unreadable.size(), manifest.redacted ? "; identifiers redacted" : "");
  }
  return 0;
}

}  // namespace

Command add_snapshot_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("snapshot", "Capture what the probes read into DIR or FILE.tar.gz, for --root replay");
  auto s = std::make_shared<SnapshotOptions>();
  c.app->add_option("-o,--output", s->destination, "Snapshot destination: a new directory or FILE.tar.gz")
      ->required()
      ->type_name("DIR|FILE.tar.gz");
  c.app->add_flag("--no-redact", s->no_redact, "Keep serial numbers, UUIDs, MAC addresses and host names");
  c.execute = [&options, s]() { return take_snapshot(options, *s); };
  return c;
}

}  // namespace interprobe::cli
