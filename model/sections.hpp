#pragma once
// The report's sections in one table: what each is called in the JSON and the metric paths, the
// probe that fills it, the finding ids that belong to it, and which readers may select it. Every
// list of section names (the JSON writer's, the policy checker's, compare's) comes from here, so
// a new section is one row.
#include <string>
#include <string_view>
#include <vector>

namespace interprobe::report {

struct SectionInfo {
  std::string_view name;            // JSON key of the report and first segment of its metric paths
  std::string_view probe;           // the probe that fills it; empty: not a probe's (probes, bottlenecks)
  std::string_view finding_prefix;  // finding ids "PREFIX.cause" that this section's probe decides
  bool in_report_json;              // a top-level key of the report, left out when its probe did not run
  bool policy_metrics;              // a policy's `metric` items may select its rows
  bool policy_facts;                // a policy's `fact` items may select its facts
  bool read_not_timed;              // its numbers are read from the machine, not timed: equal or changed
};

// In `interprobe run`'s order; "probes" (each probe's status and duration) is not a report section.
inline constexpr SectionInfo kSections[] = {
    {"probes", "", "", false, true, true, false},
    {"system", "system", "", true, true, false, true},
    {"topology", "topology", "topology", true, true, true, true},
    {"virtualization", "virtualization", "virt", true, true, true, true},
    {"bandwidth", "bandwidth", "bandwidth", true, true, true, false},
    {"collective", "collective", "collective", true, true, false, false},
    {"compute", "compute", "compute", true, true, false, false},
    {"telemetry", "telemetry", "", true, false, false, false},
    {"bottlenecks", "", "", true, true, true, false},
};

// The names of the sections with `flag` set, in table order.
std::vector<std::string> section_names(bool SectionInfo::*flag);

}  // namespace interprobe::report
