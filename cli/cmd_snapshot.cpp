#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/features.hpp"
#include "cli/session.hpp"
#include "common/cpuid.hpp"
#include "common/errors.hpp"
#include "common/stopwatch.hpp"
#include "probes/snapshot/take_snapshot.hpp"

namespace interprobe::cli {

namespace {

struct SnapshotOptions {
  std::string destination;
  bool no_redact = false;
  bool force = false;
};

int take_snapshot(const GlobalOptions& options, const SnapshotOptions& s) {
  Stopwatch clock;
  snapshot::SnapshotRequest request;
  request.destination = s.destination;
  if (!request.destination.empty() && !request.destination.has_filename())
    request.destination = request.destination.parent_path();  // "DIR/" is DIR
  request.redact = !s.no_redact;
  request.force = s.force;
  request.tool_version = interprobe_version();
  request.created_at = utc_now_iso8601();
  snapshot::check_snapshot_destination(request);  // before opening the root: a bad -o costs nothing

  OpenedRoot opened = open_root(options);
  auto cpuid = make_cpuid_source(opened.root);
  auto manifest = snapshot::take_snapshot(opened.root, *cpuid, inventory_probes(), request);
  if (!options.quiet) {
    std::cerr << fmt::format("snapshot: {} files, {} links, {} bytes -> {} in {:.2f} s; {} unreadable (see "
                             "manifest.json){}\n",
                             manifest.files, manifest.links, manifest.bytes, request.destination.string(),
                             clock.elapsed_s(), manifest.unreadable.size(),
                             manifest.redacted ? "; identifiers redacted" : "");
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
