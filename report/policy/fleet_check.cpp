#include "report/policy/fleet_check.hpp"

#include <fmt/format.h>

#include "report/policy/selector.hpp"

namespace interprobe::policy {

namespace {

Policy only(const Policy& p, bool fleet_items) {
  Policy out = p;
  out.items.clear();
  for (const auto& it : p.items)
    if ((it.kind == ItemKind::fleet) == fleet_items) out.items.push_back(it);
  return out;
}

void count(CheckResult& c, const ItemResult& r) {
  switch (r.outcome) {
    case Outcome::pass: ++c.summary.pass; break;
    case Outcome::warn: ++c.summary.warn; break;
    case Outcome::fail: ++c.summary.fail; break;
    case Outcome::skipped: ++c.summary.skipped; break;
  }
}

// pass when no subject failed; otherwise the item's severity, naming what failed.
void conclude(ItemResult& res, const std::string& what) {
  std::string failed;
  std::size_t n = 0;
  for (const auto& s : res.subjects)
    if (!s.ok) failed += fmt::format("{}{}", n++ ? ", " : "", s.subject + " (" + s.value + ")");
  res.outcome = n == 0 ? Outcome::pass : (res.item.severity == report::Severity::fail ? Outcome::fail : Outcome::warn);
  res.value = n == 0 ? fmt::format("none of {} {}", res.subjects.size(), what) : fmt::format("{} of {} {}", n, res.subjects.size(), what);
  res.detail = failed;
}

ItemResult check_outliers(const Item& it, const fleet::FleetReport& f) {
  ItemResult res{it, Outcome::skipped, "", fmt::format("|z| <= {} on {}", fleet::kOutlierThreshold, it.selector), "", {}};
  std::size_t scored = 0;
  for (const auto& m : f.outliers) {
    if (!match_glob(it.selector, m.path)) continue;
    if (m.scale == fleet::Scale::none) continue;
    ++scored;
    for (const auto& v : m.values)
      res.subjects.push_back({fmt::format("{} on {}", v.node, m.path), v.z ? fmt::format("z {:+.1f}", *v.z) : "-",
                              res.threshold, !v.outlier});
  }
  if (scored == 0) {
    res.detail = fmt::format("no metric matching {} was scored (one needs {} nodes with it and some spread)",
                             it.selector, fleet::kMinNodesForOutliers);
    return res;
  }
  conclude(res, "node values are outliers");
  return res;
}

ItemResult check_failed_nodes(const Item& it, const fleet::FleetReport& f) {
  ItemResult res{it, Outcome::skipped, "", "every node probed", "", {}};
  for (const auto& n : f.nodes) res.subjects.push_back({n.name, n.ok() ? "ok" : "failed: " + n.failure.value_or(""), res.threshold, n.ok()});
  conclude(res, "nodes failed");
  return res;
}

ItemResult check_homogeneous(const Item& it, const fleet::FleetReport& f) {
  ItemResult res{it, Outcome::skipped, "", fmt::format("every node as the majority on {}", it.selector), "", {}};
  std::size_t reports = 0;
  for (const auto& n : f.nodes) reports += n.report ? 1 : 0;
  if (reports < 2) {
    res.detail = "fewer than two nodes have a report";
    return res;
  }
  std::size_t settings = 0;
  for (const auto& h : f.heterogeneity) {
    if (!match_glob(it.selector, h.name)) continue;
    ++settings;
    for (const auto& [node, value] : h.differing)
      res.subjects.push_back({fmt::format("{} {}", node, h.name),
                              fmt::format("{} (majority {})", value, h.majority.value_or("none")), res.threshold, false});
  }
  conclude(res, "");
  if (settings == 0) res.value = "no node differs";
  else res.value = fmt::format("{} setting(s) differ, on {} node value(s)", settings, res.subjects.size());
  return res;
}

}  // namespace

std::vector<NamedCheck> check_fleet(const Policy& policy, const fleet::FleetReport& f) {
  std::vector<NamedCheck> out;
  const Policy fleet_items = only(policy, true), node_items = only(policy, false);
  if (!fleet_items.items.empty()) {
    CheckResult c{policy.name, policy.file, {}, {}};
    for (const auto& it : fleet_items.items) {
      const std::string word = std::get<std::string>(it.value);
      ItemResult r = word == "no_outliers" ? check_outliers(it, f) : word == "no_failed_nodes" ? check_failed_nodes(it, f)
                                                                                               : check_homogeneous(it, f);
      count(c, r);
      c.items.push_back(std::move(r));
    }
    out.push_back({"fleet", std::move(c)});
  }
  for (const auto& n : f.nodes) {
    if (n.report) {
      out.push_back({n.name, check_report(node_items, *n.report)});
      continue;
    }
    // No report: the node's suite is one failed case saying why.
    Item probed;
    probed.id = "node_probed";
    probed.title = "the node was probed";
    probed.kind = ItemKind::fleet;
    probed.value = std::string("no_failed_nodes");
    CheckResult c{policy.name, policy.file, {}, {}};
    ItemResult r{probed, Outcome::fail, "failed", "a report", n.failure.value_or("no reason given"), {}};
    count(c, r);
    c.items.push_back(std::move(r));
    out.push_back({n.name, std::move(c)});
  }
  return out;
}

}  // namespace interprobe::policy
