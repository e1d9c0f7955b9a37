#pragma once
// The one plain data model every probe fills and every renderer reads.
// Units live in key names; a value nobody could measure is std::nullopt (JSON null).
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/model/bandwidth.hpp"
#include "report/model/collective.hpp"
#include "report/model/system.hpp"
#include "report/model/topology.hpp"
#include "report/model/virt.hpp"
#include "report/model/value.hpp"

namespace interprobe::report {

inline constexpr const char* kSchemaVersion = "1.0.0";
inline constexpr int kSchemaMajor = 1;

enum class ProbeStatus { ok, unsupported, skipped, failed };
const char* to_string(ProbeStatus s);
std::optional<ProbeStatus> probe_status_from(const std::string& s);

struct ProbeRecord {
  std::string name;
  ProbeStatus status = ProbeStatus::ok;
  std::optional<std::string> reason;
  double seconds = 0;
};

struct LibraryInfo {
  bool found = false;
  std::optional<std::string> path;
  std::optional<std::string> version;
  std::optional<std::string> driver_version;  // NVML: the kernel driver's version
  std::optional<int> devices;                 // cudart: devices it sees
  std::optional<std::string> reason;          // why it is missing or unusable
  // Where the version came from: "library" (asked the loaded library), "file name"
  // (libnccl.so.2.28.9), "soname" (only the major version: libnccl.so.2), "compiled in".
  std::optional<std::string> version_source;
  // Set when the loaded library is interprobe's test simulator (tests/sim), to its version:
  // such a run never passes for a measurement of real hardware.
  std::optional<std::string> simulated;
};

struct ToolInfo {
  std::string name = "interprobe";
  std::string version;
  std::map<std::string, bool> features;            // compiled in: cuda, nccl, nvml, hwloc, libpci, mpi
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
const char* to_string(Severity s);
std::optional<Severity> severity_from(const std::string& s);

struct Finding {
  std::string id;  // stable, dotted: "libraries.nvml_missing"
  Severity severity = Severity::info;
  std::string title;
  std::vector<std::pair<std::string, Value>> evidence;
  std::string remedy;
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

  const ProbeRecord* probe(const std::string& name) const;
};

}  // namespace interprobe::report
