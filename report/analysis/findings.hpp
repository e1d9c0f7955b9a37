#pragma once
// Analysis is pure: Report -> findings, same input, same output, deterministic order.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/report.hpp"

namespace interprobe::analysis {

// A finding without evidence yet: every rules file builds its findings with this.
report::Finding make_finding(std::string id, report::Severity severity, std::string title, std::string remedy);
// An evidence value that is null where the report has none.
template <typename T>
report::Value optional_value(const std::optional<T>& v) {
  return v ? report::Value(*v) : report::Value(nullptr);
}

using Rule = std::function<void(const report::Report&, std::vector<report::Finding>&)>;

// Every rule, in the order their findings appear (the list and the rules' declarations: findings.cpp).
const std::vector<Rule>& all_rules();
std::vector<report::Finding> derive_findings(const report::Report& report);

}  // namespace interprobe::analysis
