#pragma once
// `interprobe check --policy P fleet.json`: the policy's machine items judged on every node's
// report, its fleet items once over the fleet (outliers, failed nodes, heterogeneity). A node
// without a report fails its suite with the reason it failed.
#include <string>
#include <vector>

#include "report/fleet/fleet.hpp"
#include "report/policy/check.hpp"

namespace interprobe::policy {

struct NamedCheck {
  std::string name;  // "fleet", or the node's name
  CheckResult result;
};

// suites[0] is "fleet" (the fleet items; none: no suite), then one per node in fleet order.
std::vector<NamedCheck> check_fleet(const Policy& policy, const fleet::FleetReport& fleet);

}  // namespace interprobe::policy
