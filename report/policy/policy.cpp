#include "report/policy/policy.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/schema_check.hpp"
#include "model/sections.hpp"
#include "report/policy/facts.hpp"

namespace interprobe::policy {

const std::vector<std::string>& fleet_checks() {
  static const std::vector<std::string> words{"no_outliers", "no_failed_nodes", "homogeneous"};
  return words;
}

const char* to_string(ItemKind k) {
  switch (k) {
    case ItemKind::metric: return "metric";
    case ItemKind::fact: return "fact";
    case ItemKind::finding: return "finding";
    case ItemKind::bottleneck: return "bottleneck";
    case ItemKind::fleet: return "fleet";
  }
  return "metric";
}

const char* to_string(Op op) {
  switch (op) {
    case Op::le: return "<=";
    case Op::lt: return "<";
    case Op::ge: return ">=";
    case Op::gt: return ">";
    case Op::eq: return "==";
    case Op::ne: return "!=";
  }
  return "==";
}

const char* to_string(Quantifier q) { return q == Quantifier::all ? "all" : "any"; }
const char* to_string(Expect e) { return e == Expect::absent ? "absent" : "present"; }

std::string literal_text(const Literal& v) {
  if (const double* d = std::get_if<double>(&v)) return fmt::format("{:.4g}", *d);
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return std::get<std::string>(v);
}

std::string probe_of_finding(const std::string& id) {
  const std::string prefix = id.substr(0, id.find('.'));
  for (const auto& s : report::kSections)
    if (!s.finding_prefix.empty() && s.finding_prefix == prefix) return std::string(s.probe);
  return "";
}

std::vector<std::string> probes_needed(const Policy& policy) {
  // The probes a policy item can need, in `interprobe run`'s order; system always, for the report
  // header's machine.
  static const std::vector<std::string> order = [] {
    std::vector<std::string> probes;
    for (const auto& s : report::kSections)
      if (!s.probe.empty() && (s.policy_metrics || s.policy_facts || !s.finding_prefix.empty())) probes.emplace_back(s.probe);
    return probes;
  }();
  std::vector<std::string> wanted{"system"};
  auto want = [&](const std::string& name) {
    if (std::find(order.begin(), order.end(), name) != order.end()) wanted.push_back(name);
  };
  for (const auto& it : policy.items) {
    switch (it.kind) {
      case ItemKind::metric:
      case ItemKind::fact:
        want(it.selector.substr(0, it.selector.find('/')));
        if (it.of) want(it.of->substr(0, it.of->find('/')));
        if (it.selector.rfind("bottlenecks/", 0) == 0) {
          want("collective");
          want("compute");
        }
        break;
      case ItemKind::finding: want(probe_of_finding(it.selector)); break;
      case ItemKind::bottleneck:
        want("collective");
        want("compute");
        break;
      case ItemKind::fleet: break;  // judged over a fleet report, which nothing here measures
    }
  }
  std::vector<std::string> out;
  for (const auto& name : order)
    if (std::find(wanted.begin(), wanted.end(), name) != wanted.end()) out.push_back(name);
  return out;
}

void expect_gpu_count(Policy& policy, std::int64_t gpus) {
  const std::string kSelector = "topology/gpu_count";
  auto ask = [gpus](Item& it) {
    it.kind = ItemKind::fact;
    it.op = Op::ge;
    it.value = static_cast<double>(gpus);
    it.severity = report::Severity::fail;
    it.title = fmt::format("At least {} NVIDIA GPU(s) on the bus (--expect-gpus)", gpus);
    it.why = fmt::format("--expect-gpus {}: fewer means a GPU fell off the bus, a passthrough failed or the wrong machine was probed", gpus);
  };
  bool found = false;
  for (auto& it : policy.items)
    if (it.kind == ItemKind::fact && it.selector == kSelector) {
      ask(it);
      found = true;
    }
  if (found) return;
  Item it;
  it.index = policy.items.size() + 1;
  it.id = "gpu-count";
  it.selector = kSelector;
  ask(it);
  policy.items.push_back(std::move(it));
}

const std::vector<std::string>& known_finding_ids() {
  static const std::vector<std::string> ids = [] {
    auto schema = nlohmann::json::parse(report::report_schema_text());
    return schema.at("$defs").at("finding_id").at("enum").get<std::vector<std::string>>();
  }();
  return ids;
}

}  // namespace interprobe::policy
