#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/features.hpp"
#include "cli/session.hpp"
#include "common/cpuid.hpp"
#include "common/errors.hpp"
#include "common/interrupt.hpp"
#include "common/output_file.hpp"
#include "common/progress.hpp"
#include "common/stopwatch.hpp"
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
  bool force = false;
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
void capture_hwloc_xml(const HostRoot& root, snapshot::Capture& capture) {
  snapshot::TempDir scratch;
  std::string why;
  fs::path file = scratch.path() / "hwloc.xml";
  if (!snapshot::export_hwloc_xml(root, file, &why)) {
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

int take_snapshot(const GlobalOptions& options, const SnapshotOptions& s) {
  Stopwatch clock;
  fs::path dest(s.destination);
  if (!dest.empty() && !dest.has_filename()) dest = dest.parent_path();  // "DIR/" is DIR
  bool archive = snapshot::looks_like_archive(dest);
  auto existing = s.force ? ExistingOutput::replace_regular : ExistingOutput::refuse;
  if (archive) check_output_target(dest, "-o", existing);
  else check_directory_target(dest);

  OpenedRoot opened = open_root(options);
  auto cpuid = make_cpuid_source(opened.root);
  // Everything is staged in a private directory and published at the end: an interrupted or
  // failed snapshot leaves nothing at -o.
  std::optional<snapshot::TempDir> staging;
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
  opened.root.set_access_log(&log);
  report::Report scratch;
  ProbeContext ctx{opened.root, *cpuid, Progress::disabled()};
  RunOutcome outcome = run_probes(inventory_probes(), ctx, scratch);
  opened.root.set_access_log(nullptr);
  if (outcome.interrupted) throw InterruptedError();

  snapshot::Capture capture(opened.root, out_dir);
  capture.everything_in(log);
  capture.fixed_detection_set();
  capture.cpuid(*cpuid);
  record_nvml(opened.root, scratch, !s.no_redact, capture);
  capture_hwloc_xml(opened.root, capture);
  throw_if_interrupted();
  auto& manifest = capture.manifest();
  manifest.tool_version = interprobe_version();
  manifest.created_at = utc_now_iso8601();
  manifest.redacted = !s.no_redact;
  if (manifest.redacted) snapshot::redact_tree(out_dir, manifest);
  capture.finish();
  throw_if_interrupted();
  if (archive) snapshot::write_archive(out_dir, dest, existing);
  else publish_directory(out_dir, dest);

  if (!options.quiet) {
    std::cerr << fmt::format("snapshot: {} files, {} links, {} bytes -> {} in {:.2f} s; {} unreadable (see "
                             "manifest.json){}\n",
                             manifest.files, manifest.links, manifest.bytes, dest.string(), clock.elapsed_s(),
                             manifest.unreadable.size(), manifest.redacted ? "; identifiers redacted" : "");
  }
  return kExitOk;
}

int take_snapshot_or_stop(const GlobalOptions& options, const SnapshotOptions& s) {
  try {
    return take_snapshot(options, s);
  } catch (const InterruptedError&) {
    std::cerr << fmt::format("interprobe: snapshot interrupted; nothing was written to -o {}\n", s.destination);
    return kExitInterrupted;
  }
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
  c.app->add_flag("--force", s->force, "Replace an existing FILE.tar.gz (a regular file only)");
  c.execute = [&options, s]() { return take_snapshot_or_stop(options, *s); };
  return c;
}

}  // namespace interprobe::cli
