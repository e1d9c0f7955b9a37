#pragma once
// The one plain data model every probe fills and every renderer reads.
// Units live in key names; a value nobody could measure is std::nullopt (JSON null).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/bandwidth.hpp"
#include "model/bottleneck.hpp"
#include "model/collective.hpp"
#include "model/compute.hpp"
#include "model/system.hpp"
#include "model/telemetry.hpp"
#include "model/topology.hpp"
#include "model/virt.hpp"
#include "model/value.hpp"
#include "model/vocabulary.hpp"

namespace interprobe::report {

inline constexpr const char* kSchemaVersion = "2.6.0";
inline constexpr int kSchemaMajor = 2;

enum class ProbeStatus { ok, unsupported, skipped, failed };
INTERPROBE_DECLARE_ENUM(ProbeStatus);

struct ProbeRecord {
  std::string name;
  ProbeStatus status = ProbeStatus::ok;
  std::optional<std::string> reason;
  double duration_s = 0;
};

// Where a library's version came from.
enum class VersionSource {
  library,      // asked the loaded library
  file_name,    // libnccl.so.2.28.9
  soname,       // only the major version: libnccl.so.2
  compiled_in,  // the version this binary was built against
};
INTERPROBE_DECLARE_ENUM(VersionSource);

struct LibraryInfo {
  bool found = false;
  std::optional<std::string> path;
  std::optional<std::string> version;
  std::optional<std::string> driver_version;  // NVML: the kernel driver's version
  std::optional<std::int64_t> device_count;   // CUDA: devices it sees
  std::optional<std::string> reason;          // why it is missing or unusable
  std::optional<VersionSource> version_source;
  // Set when the loaded library is interprobe's test simulator (tests/sim), to its version:
  // such a run never passes for a measurement of real hardware.
  std::optional<std::string> simulated;
  // NCCL: the CUDA major version the library was built for ("+cuda12.6" in its version string);
  // a libnccl built for a newer CUDA than the driver supports fails at its first call.
  std::optional<std::int64_t> cuda_major;
};

// "file name" or "soname" when the version was read off the library's file instead of asked from
// the loaded library; nullptr otherwise. For the phrase "(from the file name)".
const char* version_read_from_file(const LibraryInfo& lib);

// What this binary was built with (a closed set: every key is always written).
struct CompiledFeatures {
  bool cuda = false, nccl = false, nvml = false, hwloc = false, libpci = false, mpi = false;
  // In the order they print: {"cuda", true}, ...
  std::vector<std::pair<const char*, bool>> list() const {
    return {{"cuda", cuda}, {"nccl", nccl}, {"nvml", nvml}, {"hwloc", hwloc}, {"libpci", libpci}, {"mpi", mpi}};
  }
};

struct ToolInfo {
  std::string name = "interprobe";
  std::string version;
  CompiledFeatures features;
  std::map<std::string, LibraryInfo> libraries;    // opened by this run's probes (all with --verbose)
  std::optional<std::string> libraries_not_probed; // why (e.g. replaying a --root tree)
};

struct HostInfo {
  std::optional<std::string> hostname;
  std::optional<std::string> kernel;
  std::string root = "/";
  bool live = true;
  std::string started_at;  // ISO 8601, UTC
  double duration_s = 0;
};

enum class Severity { info, warn, fail };
INTERPROBE_DECLARE_ENUM(Severity);

struct Finding {
  std::string id;  // stable, dotted: "libraries.nvml_missing" (docs/findings.md lists them all)
  Severity severity = Severity::info;
  std::string title;
  std::map<std::string, Value> evidence;
  std::string remedy;
  // One finding per cause: the devices (BDFs, "gpu0-gpu1" pairs, sweep paths) it applies to.
  std::vector<std::string> affected;
};

struct Report {
  std::string schema_version = kSchemaVersion;
  ToolInfo tool;
  HostInfo host;
  std::vector<ProbeRecord> probes;
  std::vector<Finding> findings;
  // One key per probe, absent when the probe did not run.
  std::optional<SystemSection> system;
  std::optional<TopologySection> topology;
  std::optional<VirtSection> virtualization;
  std::optional<BandwidthSection> bandwidth;
  std::optional<CollectiveSection> collective;
  std::optional<ComputeSection> compute;
  std::optional<TelemetrySection> telemetry;
  // Not a probe: the ranking of communication against compute (`analyze`, and `run`).
  std::optional<BottleneckSection> bottlenecks;

  const ProbeRecord* probe(const std::string& name) const;
};

// Report's members in the order its JSON writes them: its codec and schema (json_codecs.cpp) are
// generated from this list, so a new section is added here, beside its member, and nowhere else.
#define INTERPROBE_REPORT_MEMBERS                                                                      \
  schema_version, tool, host, probes, findings, system, topology, virtualization, bandwidth, collective, \
      compute, telemetry, bottlenecks

}  // namespace interprobe::report
