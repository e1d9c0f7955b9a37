#pragma once
// Evaluates a policy against a report. Pure: same report and policy, same result. A subject the
// report does not hold is "not measured" and the item is skipped with the reason, never passed.
#include <string>
#include <vector>

#include "model/report.hpp"
#include "report/policy/policy.hpp"

namespace interprobe::policy {

enum class Outcome { pass, warn, fail, skipped };
const char* to_string(Outcome o);

// One row an item looked at: a metric path, a fact, a finding, a workload's batch.
struct SubjectResult {
  std::string subject;
  std::string value;      // as shown ("31.5 gbps", "q35")
  std::string threshold;  // resolved ("27.1 gbps": 0.85 x the row named by of)
  bool ok = false;
};

struct ItemResult {
  Item item;
  Outcome outcome = Outcome::skipped;
  std::string value;      // what was found, compact: the value, or "3 of 8 fail"
  std::string threshold;  // what the policy asks: "<= 30 us", "absent", ">= 0.85 x ..."
  std::string detail;     // skipped: why; failed: the subjects that failed
  std::vector<SubjectResult> subjects;
};

struct Summary {
  int pass = 0, warn = 0, fail = 0, skipped = 0;
};

struct CheckResult {
  std::string policy, file;
  std::vector<ItemResult> items;
  Summary summary;
};

CheckResult check_report(const Policy& policy, const report::Report& report);

// `check --strict`: an item that was not measured but would gate had it failed (severity fail, or
// warn with warn_gates) fails instead of being skipped: a gate that reads nothing cannot pass.
void fail_unmeasured_gates(CheckResult& result, bool warn_gates);

// Whether the result gates a pipeline: a failed item, or (warn_gates) a warned one.
bool check_failed(const CheckResult& result, bool warn_gates);

}  // namespace interprobe::policy
